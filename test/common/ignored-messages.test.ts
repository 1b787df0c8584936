import { describe, expect, it } from 'vitest'
import { IgnoredMessages, messageType } from '../../src/common/ignored-messages.js'

describe('IgnoredMessages', () => {
  it('counts every message by kind and logs each kind and type once', () => {
    const log: string[] = []
    const ignored = new IgnoredMessages('test message', (line) => log.push(line))
    for (let i = 0; i < 5; i++) ignored.ignore('unknown_type', 'nope', 'unknown')
    ignored.ignore('unknown_type', 'other', 'unknown')
    ignored.ignore('malformed', undefined, 'not JSON')
    ignored.ignore('malformed', undefined, 'not JSON')
    expect(ignored.counts()).toEqual({ malformed: 2, unknown_type: 6 })
    expect(log).toEqual([
      'test message of unknown type "nope" ignored (unknown); further ones of this kind are counted, not logged',
      'test message of unknown type "other" ignored (unknown); further ones of this kind are counted, not logged',
      'test message malformed ignored (not JSON); further ones of this kind are counted, not logged',
    ])
  })

  it('keeps its set of logged types bounded and quotes long types shortened', () => {
    const log: string[] = []
    const ignored = new IgnoredMessages('m', (line) => log.push(line))
    for (let i = 0; i < 1000; i++) ignored.ignore('unknown_type', `t${i}-${'x'.repeat(500)}`, 'u')
    expect(ignored.counts().unknown_type).toBe(1000)
    expect(log).toHaveLength(100)
    for (const line of log) expect(line.length).toBeLessThan(200)
  })

  it('reads a type only from an object', () => {
    expect(messageType({ type: 'a' })).toBe('a')
    expect(messageType('a')).toBeUndefined()
    expect(messageType(null)).toBeUndefined()
  })
})
