/**
 * Drill 6, many live clients. A server process runs both admins; the drill opens hundreds of
 * raw `http.request` clients on the route-control admin's `GET /api/events` and as many on the
 * task admin's `GET {tasks}/dashboard/stream` while route states flip and tasks run at about
 * 100 changes a second each. Some clients of each stream stall: they stop reading (their socket
 * is paused) and never resume until the end.
 *
 * Measured: the server's RSS before, at its peak and after; whether the server dropped every
 * stalled client (a client whose unsent bytes pass `clientBufferBytes` is disconnected) and how
 * long that took; and, for every other client, events missing or out of order (by event id).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { createParser, type EventSourceParser } from 'eventsource-parser'
import { loginAt, MOUNTS, TASK_COOKIE } from '../lib/admins.js'
import { startChild } from '../lib/child.js'
import { atMost, exactly, measured } from '../lib/drill.js'
import type { Drill, DrillFigure, DrillScale } from '../lib/drill.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const MIB = 1 << 20

/** `clientBufferBytes` of both admins in the drill: small, so stalled clients go within seconds. */
export const DRILL_CLIENT_BUFFER_BYTES = 256 * 1024

/** Text added to each change's reason and tags: events of about 1 kB, like records with notes. */
const PAD_BYTES = 900

/** One stream client and what it saw. */
interface StreamClient {
  stream: 'admin' | 'tasks'
  stalled: boolean
  response: IncomingMessage
  events: number
  bytes: number
  lastId: number
  missing: number
  outOfOrder: number
  ended: boolean
  /** The stream's parser (it holds the unfinished event). */
  parser: EventSourceParser
}

/** Opens one stream; resolves once its headers arrived (200 and text/event-stream). */
function openStream(
  port: number,
  stream: StreamClient['stream'],
  path: string,
  headers: Record<string, string>,
  stalled: boolean,
): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false })
    request.on('error', reject)
    request.on('response', (response) => {
      if (
        response.statusCode !== 200 ||
        !(response.headers['content-type'] ?? '').startsWith('text/event-stream')
      ) {
        reject(new Error(`${path}: ${String(response.statusCode)}`))
        response.destroy()
        return
      }
      const client: StreamClient = {
        stream,
        stalled,
        response,
        events: 0,
        bytes: 0,
        lastId: 0,
        missing: 0,
        outOfOrder: 0,
        ended: false,
        parser: createParser({ onEvent: ({ id }) => countId(client, id) }),
      }
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => read(client, chunk))
      response.on('end', () => (client.ended = true))
      response.on('close', () => (client.ended = true))
      response.on('error', () => (client.ended = true))
      if (stalled) {
        response.pause()
        response.socket.pause()
      }
      resolve(client)
    })
    request.end()
  })
}

/**
 * Feeds a chunk to the client's parser, which hands each complete event to `countId`. A stalled
 * client's events are not checked (only whether the server ends its stream), so what it drains
 * after resuming — megabytes the kernel kept — is counted, not parsed.
 */
function read(client: StreamClient, chunk: string): void {
  client.bytes += chunk.length
  if (!client.stalled) client.parser.feed(chunk)
}

/** Counts an event by its `id:`: gaps and ids that go backwards. */
function countId(client: StreamClient, sent: string | undefined): void {
  if (sent === undefined) return
  const id = Number(sent)
  client.events++
  if (client.lastId !== 0 && id <= client.lastId) client.outOfOrder++
  else {
    if (client.lastId !== 0) client.missing += id - client.lastId - 1
    client.lastId = id
  }
}

/** Runs the drill; the counts and durations depend on `scale`. */
export async function sseClients(scale: DrillScale): Promise<DrillFigure[]> {
  const perStream = scale === 'full' ? 200 : 20
  const stalledPerStream = scale === 'full' ? 20 : 2
  // The load runs at least `minLoadMs`, then until every stalled client is dropped (at most
  // `maxLoadMs`): the kernel takes about 4 MB into a stalled socket before the server's own
  // buffer grows, so a drop comes after 4 MB + clientBufferBytes.
  const minLoadMs = scale === 'full' ? 20_000 : 5000
  const maxLoadMs = scale === 'full' ? 150_000 : 60_000
  // The short form has few clients: it sends more per second so that the drop comes sooner.
  const perSecond = scale === 'full' ? 100 : 300
  const server = startChild('sse-server', {
    SY_CLIENT_BUFFER_BYTES: String(DRILL_CLIENT_BUFFER_BYTES),
  })
  const clients: StreamClient[] = []
  try {
    const port = (await server.waitFor('listening')).port as number
    const probe = async () => {
      const answer = await server.ask({ type: 'probe' }, 'probed')
      return {
        rss: answer.rss as number,
        streams: answer.streams as number,
        changes: answer.changes as number,
      }
    }
    const tokens = await loginAt(port)
    const targets = [
      {
        stream: 'admin' as const,
        path: `${MOUNTS.admin}/api/events`,
        headers: { authorization: `Bearer ${tokens.admin}` } as Record<string, string>,
      },
      {
        stream: 'tasks' as const,
        path: `${MOUNTS.tasks}/dashboard/stream`,
        headers: { cookie: `${TASK_COOKIE}=${tokens.tasks}` },
      },
    ]
    for (const target of targets) {
      for (let from = 0; from < perStream; from += 50) {
        const batch = Array.from({ length: Math.min(50, perStream - from) }, (_, i) =>
          openStream(port, target.stream, target.path, target.headers, from + i < stalledPerStream),
        )
        clients.push(...(await Promise.all(batch)))
      }
    }
    const healthy = clients.filter((client) => !client.stalled)
    const stalled = clients.filter((client) => client.stalled)
    await sleep(500)
    const before = await probe()

    server.send({ type: 'load', perSecond, padBytes: PAD_BYTES })
    const started = performance.now()
    let peakRss = before.rss
    let allDroppedMs: number | null = null
    const elapsed = () => performance.now() - started
    while (elapsed() < minLoadMs || (allDroppedMs === null && elapsed() < maxLoadMs)) {
      await sleep(250)
      const now = await probe()
      peakRss = Math.max(peakRss, now.rss)
      if (allDroppedMs === null && now.streams <= clients.length - stalled.length)
        allDroppedMs = Math.round(performance.now() - started)
    }
    server.send({ type: 'quiet' })
    const loaded = await probe()
    const seconds = (performance.now() - started) / 1000

    // The last events may still be on their way to the healthy clients.
    const lastId = (stream: StreamClient['stream']) =>
      Math.max(...healthy.filter((c) => c.stream === stream).map((c) => c.lastId))
    const caughtUp = () =>
      healthy.every((client) => client.ended || client.lastId === lastId(client.stream))
    const limit = performance.now() + 10_000
    while (!caughtUp() && performance.now() < limit) await sleep(50)
    await sleep(300)
    const after = await probe()

    // A dropped stalled client finds the end of its stream once it reads again.
    for (const client of stalled) {
      client.response.socket.resume()
      client.response.resume()
    }
    // Bounded, and generous: on a busy machine a resumed client drains megabytes first.
    const endLimit = performance.now() + 15_000
    while (stalled.some((client) => !client.ended) && performance.now() < endLimit) await sleep(50)

    const healthyDropped = healthy.filter((client) => client.ended).length
    const missing = healthy.reduce(
      (sum, client) => sum + client.missing + (lastId(client.stream) - client.lastId),
      0,
    )
    const outOfOrder = healthy.reduce((sum, client) => sum + client.outOfOrder, 0)
    const events = (stream: StreamClient['stream']) => lastId(stream)
    const kibPerSecond = (stream: StreamClient['stream']) =>
      Math.round(
        Math.max(...healthy.filter((c) => c.stream === stream).map((c) => c.bytes)) /
          1024 /
          seconds,
      )
    const bound = (2 * stalled.length * DRILL_CLIENT_BUFFER_BYTES) / MIB + 64
    const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10
    return [
      measured(
        'clients (admin stream + task stream, stalled of each)',
        `${perStream} + ${perStream}, ${stalledPerStream} + ${stalledPerStream}`,
      ),
      measured(
        'events per second (admin stream / task stream)',
        `${Math.round(events('admin') / seconds)} / ${Math.round(events('tasks') / seconds)}`,
      ),
      measured('changes made (route flips, tasks run)', loaded.changes),
      measured(
        'KiB/s to each client (admin stream / task stream)',
        `${kibPerSecond('admin')} / ${kibPerSecond('tasks')}`,
      ),
      measured(
        'server RSS MiB before / peak / after',
        `${mib(before.rss)} / ${mib(peakRss)} / ${mib(after.rss)}`,
      ),
      atMost(
        'server RSS growth MiB (peak − before)',
        mib(peakRss - before.rss),
        Math.round(bound),
        '',
      ),
      exactly(
        'stalled clients dropped by the server',
        stalled.filter((c) => c.ended).length,
        stalled.length,
      ),
      {
        name: `ms until every stalled client was dropped (clientBufferBytes ${DRILL_CLIENT_BUFFER_BYTES / 1024} KiB)`,
        value: allDroppedMs ?? 'never',
        goal: `< ${maxLoadMs}`,
        ok: allDroppedMs !== null,
      },
      exactly('healthy clients dropped', healthyDropped, 0),
      exactly('events missing (healthy clients)', missing, 0),
      exactly('events out of order (healthy clients)', outOfOrder, 0),
      measured(
        'events received (healthy clients)',
        healthy.reduce((sum, c) => sum + c.events, 0),
      ),
    ]
  } finally {
    for (const client of clients) client.response.destroy()
    await server.kill()
  }
}

/** The drill. */
export const sseClientsDrill: Drill = {
  name: 'sse-clients',
  title: 'hundreds of live clients on both admin event streams, some stalled, ~100 changes/s',
  run: sseClients,
}
