/**
 * The SDK's event-stream reader: frames split across chunks, several frames in one chunk,
 * every line ending the format allows (CRLF, CR, LF), multi-line data, comments and `retry:`
 * lines, unknown fields, the frame-size bound.
 */
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readEvents } from '../../src/sdk/sse-reader.js'
import { until } from '../helpers/wait.js'

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

  it('keeps the type of a frame ending in CRLF CRLF, apart from the next frame', async () => {
    const { done, events } = collect([
      'event: snapshot\r\ndata: {"a":1}\r\n\r\n',
      'event: flag\ndata: {"b":2}\n\n',
    ])
    await done
    expect(events).toEqual([
      ['snapshot', { a: 1 }],
      ['flag', { b: 2 }],
    ])
  })

  it('reads CR-only line endings, and a CRLF split between two chunks', async () => {
    const { done, events } = collect([
      'event: snapshot\rdata: {"a":1}\r\revent: flag\r\ndata: {"b":2}\r',
      '\n\r\n',
    ])
    await done
    expect(events).toEqual([
      ['snapshot', { a: 1 }],
      ['flag', { b: 2 }],
    ])
  })

  it('hands over a frame whose last CR ends a chunk at once, not when more bytes come', async () => {
    const body = new PassThrough()
    const events: [string, unknown][] = []
    const done = readEvents(body, (type, data) => events.push([type, data]))
    body.write('event: snapshot\rdata: {"a":1}\r\r')
    await until(() => events.length === 1)
    expect(events).toEqual([['snapshot', { a: 1 }]])
    // The LF that may follow such a CR belongs to the same line ending: no extra blank line.
    body.write('\ndata: [2,\r')
    body.write('\ndata: 3]\r\n\r\n')
    body.end()
    await done
    expect(events).toEqual([
      ['snapshot', { a: 1 }],
      ['message', [2, 3]],
    ])
  })

  it('skips comment lines inside and between frames', async () => {
    const { done, events } = collect([
      ': hello\r\n\r\nevent: t\r\n: inside\r\ndata: 1\r\n\r\n:\n\n',
    ])
    await done
    expect(events).toEqual([['t', 1]])
  })

  it('takes `retry:` lines (valid or not) and unknown fields without losing a frame', async () => {
    const { done, events } = collect([
      'retry: 1500\nevent: a\ndata: 1\n\nretry: soon\nevent: b\nfuture: x\ndata: 2\n\n',
    ])
    await done
    expect(events).toEqual([
      ['a', 1],
      ['b', 2],
    ])
  })

  it('joins multi-line data, whatever the line endings', async () => {
    const { done, events } = collect([
      'event: snapshot\r\ndata: {\r\ndata:   "routes": [\rdata: 1, 2]\ndata: }\r\n\r\n',
    ])
    await done
    expect(events).toEqual([['snapshot', { routes: [1, 2] }]])
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
