import { describe, expect, it } from 'vitest'
import { LoggerSlot, stderrLogger, toLogger } from '../../src/common/logger.js'
import { createEngine } from '../../src/create-engine.js'
import { TaskManager } from '../../src/tasks/index.js'
import { recordingLogger } from '../helpers/logger.js'

/** A line of {@link stderrLogger}, parsed. */
interface JsonLine {
  level: number
  time: number
  msg?: string
  err?: { type: string; message: string; stack: string }
  [field: string]: unknown
}

describe('stderrLogger', () => {
  function capture(level?: 'debug' | 'info' | 'warn' | 'error') {
    const written: string[] = []
    const logger = stderrLogger({
      bindings: { module: 'switchyard' },
      write: (line) => written.push(line),
      ...(level === undefined ? {} : { level }),
    })
    return { logger, lines: () => written.map((line) => JSON.parse(line) as JsonLine) }
  }

  it('writes warnings and errors only by default, one JSON line each in pino layout', () => {
    const { logger, lines } = capture()
    logger.debug('hidden')
    logger.info({ id: 1 }, 'hidden too')
    logger.warn('careful')
    logger.error({ err: new TypeError('broken'), route: 'GET:/a' }, 'failed')
    const [warn, error] = lines()
    expect(lines()).toHaveLength(2)
    expect(warn).toMatchObject({ level: 40, module: 'switchyard', msg: 'careful' })
    expect(typeof warn!.time).toBe('number')
    expect(error).toMatchObject({ level: 50, module: 'switchyard', route: 'GET:/a', msg: 'failed' })
    expect(error!.err).toMatchObject({ type: 'TypeError', message: 'broken' })
    expect(error!.err!.stack).toContain('logger.test.ts')
  })

  it('takes a lower level, and children add their bindings', () => {
    const { logger, lines } = capture('debug')
    logger.child({ module: 'switchyard.tasks', queue: 'q' }).debug({ n: 1 }, 'deep')
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 20,
        module: 'switchyard.tasks',
        queue: 'q',
        n: 1,
        msg: 'deep',
      }),
    ])
  })

  it('never loses a line to a value JSON cannot hold', () => {
    const { logger, lines } = capture()
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    logger.error({ cyclic }, 'still written')
    expect(lines()).toEqual([expect.objectContaining({ level: 50, msg: 'still written' })])
  })
})

describe('toLogger', () => {
  it('returns a complete logger as it is', () => {
    const full = recordingLogger()
    expect(toLogger(full)).toBe(full)
  })

  it('completes a warn/error-only logger: other levels dropped, child bindings merged', () => {
    const calls: unknown[][] = []
    const logger = toLogger({
      warn: (...args: unknown[]) => calls.push(['warn', ...args]),
      error: (...args: unknown[]) => calls.push(['error', ...args]),
    })
    logger.info('dropped')
    logger.debug({ a: 1 }, 'dropped')
    const child = logger.child({ module: 'switchyard' })
    child.warn('plain')
    child.error({ err: 'x' }, 'with fields')
    child.child({ part: 'store' }).error({ n: 2 })
    logger.warn({ b: 1 }, 'unbound')
    expect(calls).toEqual([
      ['warn', { module: 'switchyard' }, 'plain'],
      ['error', { module: 'switchyard', err: 'x' }, 'with fields'],
      ['error', { module: 'switchyard', part: 'store', n: 2 }],
      ['warn', { b: 1 }, 'unbound'],
    ])
  })
})

describe('a logger that is not one', () => {
  it('is refused with a clear error, and an attach that fails changes nothing', () => {
    for (const bad of [undefined, null, 'console', {}, { warn: () => undefined }]) {
      expect(() => toLogger(bad as never)).toThrow(/pino-compatible logger/)
    }
    const fallback = recordingLogger()
    const slot = new LoggerSlot(undefined, () => fallback)
    expect(() => slot.attach({ error: 'nope' } as never)).toThrow(TypeError)
    slot.warn('still the default')
    expect(fallback.messages()).toEqual(['still the default'])
    // The default is still replaceable after a refused attach.
    const later = recordingLogger()
    expect(slot.attach(later)).toBe(true)
    slot.warn('now attached')
    expect(later.messages()).toEqual(['now attached'])
  })

  it('createEngine and new TaskManager refuse it', () => {
    expect(() => createEngine({ logger: 'console' as never })).toThrow(/pino-compatible logger/)
    expect(() => new TaskManager({ logger: {} as never })).toThrow(/pino-compatible logger/)
  })
})

describe('LoggerSlot', () => {
  it('starts on the fallback and takes the first attached logger only', () => {
    const fallback = recordingLogger()
    const first = recordingLogger()
    const second = recordingLogger()
    const slot = new LoggerSlot(undefined, () => fallback)
    slot.warn('before')
    expect(slot.attach(first)).toBe(true)
    expect(slot.attach(second)).toBe(false)
    slot.error({ err: new Error('x') }, 'after')
    expect(fallback.messages()).toEqual(['before'])
    expect(first.messages('error')).toEqual(['after'])
    expect(second.lines).toEqual([])
  })

  it('never replaces a logger given explicitly', () => {
    const given = recordingLogger()
    const slot = new LoggerSlot(given, () => recordingLogger())
    expect(slot.attach(recordingLogger())).toBe(false)
    slot.info('kept')
    expect(given.messages('info')).toEqual(['kept'])
  })

  it('hands out children that follow an attach made later', () => {
    const fallback = recordingLogger()
    const attached = recordingLogger()
    const slot = new LoggerSlot(undefined, () => fallback)
    const child = slot.child({ module: 'switchyard.store' })
    const grandchild = child.child({ part: 'redis' })
    child.warn('early')
    slot.attach(attached)
    child.warn('late')
    grandchild.error('deeper')
    expect(fallback.lines).toEqual([
      { level: 'warn', msg: 'early', fields: { module: 'switchyard.store' } },
    ])
    expect(attached.lines).toEqual([
      { level: 'warn', msg: 'late', fields: { module: 'switchyard.store' } },
      { level: 'error', msg: 'deeper', fields: { module: 'switchyard.store', part: 'redis' } },
    ])
  })
})
