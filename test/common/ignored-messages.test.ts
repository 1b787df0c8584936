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
    expect(ignored.counts()).toEqual({ malformed: 2, unknown_type: 6, unknown_field: 0 })
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

  it('counts a known message with new fields once, logs each type and field once, bounded', () => {
    const log: string[] = []
    const ignored = new IgnoredMessages('m', (line) => log.push(line))
    const known = new Set(['type', 'key'])
    ignored.unknownFields('flag', { type: 'flag', key: 'a' }, known)
    expect(ignored.counts().unknown_field).toBe(0)
    for (let i = 0; i < 3; i++)
      ignored.unknownFields('flag', { type: 'flag', key: 'a', region: 'eu', tier: 1 }, known)
    expect(ignored.counts()).toEqual({ malformed: 0, unknown_type: 0, unknown_field: 3 })
    expect(log).toEqual([
      'm "flag" has a field this version does not know, "region": applied without it; further ones are counted, not logged',
      'm "flag" has a field this version does not know, "tier": applied without it; further ones are counted, not logged',
    ])
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i]))
    ignored.unknownFields('flag', many, known)
    expect(log).toHaveLength(100)
    expect(ignored.counts().unknown_field).toBe(4)
  })

  it('reads a type only from an object', () => {
    expect(messageType({ type: 'a' })).toBe('a')
    expect(messageType('a')).toBeUndefined()
    expect(messageType(null)).toBeUndefined()
  })
})
