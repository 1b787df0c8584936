/**
 * The central server's SDK streams, on fake responses: frames of a close-delimited response go
 * to its connection, those of a chunked one through the response; each app hears its service
 * and the global scope only; a slow app is dropped without affecting the others.
 */
import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/index.js'
import { SdkStreams } from '../../src/sdk/server/streams.js'

interface FakeWritable {
  writableLength: number
  destroyed: boolean
  writableEnded: boolean
  written: string[]
  write(text: string | Buffer): boolean
  end(): void
}

function writable(): FakeWritable {
  return {
    writableLength: 0,
    destroyed: false,
    writableEnded: false,
    written: [],
    write(text) {
      this.written.push(text.toString())
      return true
    },
    end() {
      this.writableEnded = true
    },
  }
}

/** A response whose head is written, chunked or delimited by the connection's end. */
function fakeResponse(chunked: boolean) {
  const socket = writable()
  const response = Object.assign(writable(), { chunkedEncoding: chunked, socket })
  return { response, socket, raw: response as unknown as ServerResponse }
}

const frames = (target: FakeWritable, type: string) =>
  target.written.filter((text) => text.startsWith(`event: ${type}\n`))

let engine: Engine
let streams: SdkStreams
afterEach(async () => {
  streams.close()
  await engine.close()
})

async function setUp(clientBufferBytes?: number) {
  engine = createEngine({ store: 'memory', service: 'central' })
  await engine.start()
  engine.registerRoute('GET', '/a', null, { service: 'shop' })
  engine.registerRoute('GET', '/a', null, { service: 'mail' })
  streams = new SdkStreams(
    engine,
    () => undefined,
    clientBufferBytes === undefined ? {} : { clientBufferBytes },
  )
}

/**
 * Connects one fake app per entry (`[service, chunked]`) and resolves once each has its
 * snapshot (on the connection, or on the response for a chunked stream).
 */
async function connectApps(...apps: [service: string, chunked: boolean][]) {
  const connected = apps.map(([service, chunked]) => {
    const app = fakeResponse(chunked)
    streams.connect(app.raw, service)
    return app
  })
  for (const [index, app] of connected.entries()) {
    const target = apps[index]![1] ? app.response : app.socket
    await expect.poll(() => frames(target, 'snapshot').length).toBe(1)
  }
  return connected
}

describe('SdkStreams', () => {
  it('writes a close-delimited stream to its connection and a chunked one through the response', async () => {
    await setUp()
    const [plain, chunked] = await connectApps(['shop', false], ['shop', true])
    await engine.disable('GET:/a', { service: 'shop', reason: 'r1' })
    expect(frames(plain!.socket, 'route_state')).toHaveLength(1)
    expect(frames(chunked!.response, 'route_state')).toHaveLength(1)
    expect(frames(chunked!.socket, 'route_state')).toHaveLength(0)
    // The head and the retry line go through the response in both cases.
    expect(plain!.response.written).toEqual(['retry: 1000\n\n'])
  })

  it('sends an app its own service and the global scope only', async () => {
    await setUp()
    const [shop, mail] = await connectApps(['shop', false], ['mail', false])
    await engine.disable('GET:/a', { service: 'shop', reason: 'r1' })
    await engine.setGlobalRateLimit({ limit: '5/minute' })
    expect(frames(shop!.socket, 'route_state')).toHaveLength(1)
    expect(frames(mail!.socket, 'route_state')).toHaveLength(0)
    expect(frames(shop!.socket, 'global_rl_policy')).toHaveLength(1)
    expect(frames(mail!.socket, 'global_rl_policy')).toHaveLength(1)
  })

  it('followed before other listeners, writes an app its frame before they hear the change', async () => {
    await setUp()
    streams.follow()
    // A change with no app connected is skipped (and followed only once, whoever asks).
    await engine.disable('GET:/a', { service: 'shop', reason: 'r0' })
    const framesWhenHeard: number[] = []
    engine.onChange((event) => {
      if (event.type === 'route_state')
        framesWhenHeard.push(frames(shop!.socket, 'route_state').length)
    })
    const [shop] = await connectApps(['shop', false])
    await engine.enable('GET:/a', { service: 'shop', reason: 'r1' })
    await engine.disable('GET:/a', { service: 'shop', reason: 'r2' })
    expect(frames(shop!.socket, 'route_state')).toHaveLength(2)
    expect(framesWhenHeard).toEqual([1, 2])
  })

  it('drops an app whose connection stops reading, without affecting the others', async () => {
    await setUp(100)
    const [slow, fast] = await connectApps(['shop', false], ['shop', false])
    expect(streams.clientCount).toBe(2)
    slow!.socket.writableLength = 1000
    await engine.disable('GET:/a', { service: 'shop', reason: 'r1' })
    expect(streams.clientCount).toBe(1)
    expect(slow!.response.writableEnded).toBe(true)
    expect(frames(slow!.socket, 'route_state')).toHaveLength(0)
    await engine.enable('GET:/a', { service: 'shop', reason: 'r2' })
    expect(frames(fast!.socket, 'route_state')).toHaveLength(2)
  })
})
