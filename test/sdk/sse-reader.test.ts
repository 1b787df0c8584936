/**
 * The SDK's event-stream reader: frames split across chunks, several frames in one chunk,
 * multi-line data, comments and `retry:` lines, the frame-size bound.
 */
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readEvents } from '../../src/sdk/sse-reader.js'

function collect(chunks: string[], maxFrameBytes?: number) {
  const body = new PassThrough()
  const events: [string, unknown][] = []
  const done = readEvents(body, (type, data) => events.push([type, data]), maxFrameBytes)
  for (const chunk of chunks) body.write(chunk)
  body.end()
  return { done, events }
}

describe('readEvents', () => {
  it('reads typed frames, several to a chunk and one split across chunks', async () => {
    const { done, events } = collect([
      'retry: 1000\n\n: keepalive\n\nevent: snapshot\ndata: {"a":1}\n\nevent: fl',
      'ag\ndata: {"key":"x",',
      '"flag":null}\n\n',
    ])
    await done
    expect(events).toEqual([
      ['snapshot', { a: 1 }],
      ['flag', { key: 'x', flag: null }],
    ])
  })

  it('joins data lines with newlines, takes `data:` without a space, defaults the type', async () => {
    const { done, events } = collect(['data:[1,\ndata: 2]\n\nevent:  spaced \ndata:"s"\n\n'])
    await done
    expect(events).toEqual([
      ['message', [1, 2]],
      ['spaced', 's'],
    ])
  })

  it('skips frames without data and ignores id lines', async () => {
    const { done, events } = collect(['event: ping\n\nid: 7\nevent: t\ndata: true\n\n'])
    await done
    expect(events).toEqual([['t', true]])
  })

  it('ends with an error on a frame that is not JSON', async () => {
    const { done, events } = collect(['event: t\ndata: {oops\n\n'])
    await expect(done).rejects.toThrow()
    expect(events).toEqual([])
  })

  it('ends with an error when a frame outgrows the bound, without growing further', async () => {
    const { done, events } = collect([`data: "${'x'.repeat(200)}`], 64)
    await expect(done).rejects.toThrow(/exceeds 64 bytes/)
    expect(events).toEqual([])
  })
})

describe('readEvents with a malformed frame', () => {
  it('skips a frame that is not JSON, reports it, and reads on', async () => {
    const body = new PassThrough()
    const events: [string, unknown][] = []
    const malformed: string[] = []
    const done = readEvents(
      body,
      (type, data) => events.push([type, data]),
      undefined,
      (type) => malformed.push(type),
    )
    body.write('event: flag\ndata: {not json\n\nevent: brand_new\ndata: {"x":1}\n\n')
    body.end('event: flag\ndata: {"key":"k","flag":null}\n\n')
    await done
    expect(malformed).toEqual(['flag'])
    expect(events).toEqual([
      ['brand_new', { x: 1 }],
      ['flag', { key: 'k', flag: null }],
    ])
  })
})
