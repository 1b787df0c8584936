/**
 * The OFREP change stream's `lastModified`: when the instance learned of the latest change,
 * the same in the broadcast of a change and in the catch-up event a late stream gets for it.
 */
import type { ServerResponse } from 'node:http'
import { createParser } from 'eventsource-parser'
import { afterEach, describe, expect, it } from 'vitest'
import type { EvaluationKeys } from '../../src/admin/auth/evaluation-keys.js'
import { OfrepStreams } from '../../src/admin/ofrep/streams.js'
import { ManualClock } from '../../src/core/clock.js'

/** A response that keeps what is written to it. */
function response() {
  const written: string[] = []
  const fake = {
    destroyed: false,
    writableEnded: false,
    writableLength: 0,
    write(text: string) {
      written.push(text)
      return true
    },
    end() {
      fake.writableEnded = true
    },
    destroy() {
      fake.destroyed = true
    },
  }
  // Parsed as a client parses the stream: every `message` event's JSON data, in order.
  const messages = () => {
    const found: Record<string, unknown>[] = []
    const parser = createParser({
      onEvent: (event) => {
        if (event.event === 'message') found.push(JSON.parse(event.data) as Record<string, unknown>)
      },
    })
    for (const text of written) parser.feed(text)
    return found
  }
  return { response: fake as unknown as ServerResponse, messages }
}

const OPEN = { keyId: null, holder: 'address:127.0.0.1', scope: null }
const noKeys = { get: () => Promise.resolve(null) } as unknown as EvaluationKeys
const opened: OfrepStreams[] = []
afterEach(() => {
  for (const streams of opened.splice(0)) streams.close()
})

describe('OFREP change stream lastModified', () => {
  it('is when the change was learned, in the broadcast and in a late catch-up alike', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z')
    const started = clock.now()
    let fingerprint = 'a'
    const streams = new OfrepStreams(10, clock, () => fingerprint, noKeys)
    opened.push(streams)

    // Before any change: the start of the instance.
    clock.advance(5_000)
    const early = response()
    streams.connect(early.response, OPEN, null, 'stale')
    expect(early.messages()).toEqual([
      { type: 'refetchEvaluation', etag: 'a', lastModified: Math.floor(started / 1000) },
    ])

    clock.advance(60_000)
    fingerprint = 'b'
    const changedAt = clock.now()
    streams.changed()
    await new Promise((resolve) => setImmediate(resolve))
    const broadcast = early.messages()[1]
    expect(broadcast).toEqual({
      type: 'refetchEvaluation',
      etag: 'b',
      lastModified: Math.floor(changedAt / 1000),
    })

    // Ten minutes on, a page whose bulk answer predates the change catches up: same values.
    clock.advance(600_000)
    const late = response()
    streams.connect(late.response, OPEN, null, 'a')
    expect(late.messages()).toEqual([broadcast])
  })
})
