/**
 * Test helpers for the task admin: an app with a manager mounted at `/tasks`, a login that
 * returns the session cookie and CSRF token, and an SSE client that collects frames.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import { createParser } from 'eventsource-parser'
import { TaskManager, type TaskManagerOptions } from '../../../src/tasks/index.js'
import { taskAdmin, type TaskAdminOptions } from '../../../src/tasks/fastify/index.js'
import { quietLogger } from '../helpers.js'

/** An app with `taskAdmin` mounted, and its manager. */
export async function adminApp(
  options: Partial<TaskAdminOptions> = {},
  managerOptions: TaskManagerOptions = {},
  manager = new TaskManager({ logger: quietLogger, ...managerOptions }),
): Promise<{ app: FastifyInstance; manager: TaskManager }> {
  const app = Fastify()
  await app.register(taskAdmin, { taskManager: manager, ...options })
  await app.ready()
  return { app, manager }
}

/**
 * The login form's POST as a browser sends it: the view is fetched first for its pre-login
 * cookie and CSRF token. `fields` are added to (or override) the form's own.
 */
export async function loginRequest(
  app: FastifyInstance,
  username: string,
  password: string,
  base = '/tasks',
  fields: Record<string, string> = {},
): Promise<{
  method: 'POST'
  url: string
  payload: string
  headers: Record<string, string>
}> {
  const view = await app.inject(`${base}/auth/login`)
  const token = /name="csrf_token" value="([^"]+)"/.exec(view.body)?.[1]
  const nonce = view.cookies.find((c) => c.name === 'switchyard_tasks_login')?.value
  if (token === undefined || nonce === undefined) throw new Error('no login form token')
  return {
    method: 'POST',
    url: `${base}/auth/login`,
    payload: new URLSearchParams({ csrf_token: token, username, password, ...fields }).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `switchyard_tasks_login=${nonce}`,
    },
  }
}

/** Logs in through the form; returns the cookie header value and the page's CSRF token. */
export async function login(
  app: FastifyInstance,
  username = 'admin',
  password = 's3cret',
  base = '/tasks',
): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const response = await app.inject(await loginRequest(app, username, password, base))
  if (response.statusCode !== 303) throw new Error(`login failed: ${String(response.statusCode)}`)
  const setCookie = String(response.headers['set-cookie'])
  const cookie = setCookie.split(';')[0]!
  const page = await app.inject({ url: `${base}/dashboard`, headers: { cookie } })
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1]
  if (csrf === undefined) throw new Error('no csrf token on the dashboard')
  return { cookie, csrf, setCookie }
}

/** One SSE frame. */
export interface Frame {
  id: number
  event: string
  data: unknown
}

/** An open SSE stream collecting frames. */
export interface StreamClient {
  frames: Frame[]
  /** The text of the comments seen (`keepalive`). */
  comments: string[]
  response: IncomingMessage
  /** Resolves once `count` frames have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Frame[]>
  close(): void
}

/** Opens `url` as an event stream. */
export function openStream(
  url: string,
  headers: Record<string, string> = {},
): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { accept: 'text/event-stream', ...headers } })
    request.once('error', reject)
    request.once('response', (response) => {
      const frames: Frame[] = []
      const comments: string[] = []
      const waiters: (() => void)[] = []
      const wakeAll = () => {
        for (const wake of waiters.splice(0)) wake()
      }
      const parser = createParser({
        onEvent: (event) => {
          frames.push({
            id: Number(event.id),
            event: event.event ?? 'message',
            data: JSON.parse(event.data),
          })
          wakeAll()
        },
        onComment: (comment) => {
          comments.push(comment)
          wakeAll()
        },
      })
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => parser.feed(chunk))
      resolve({
        frames,
        comments,
        response,
        waitFor(count, timeoutMs = 10_000) {
          return new Promise((done, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`only ${String(frames.length)} of ${String(count)} frames`)),
              timeoutMs,
            )
            const check = () => {
              if (frames.length >= count) {
                clearTimeout(timer)
                done(frames)
              } else waiters.push(check)
            }
            check()
          })
        },
        close: () => request.destroy(),
      })
    })
    request.end()
  })
}

/** The base URL of a listening app. */
export async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ host: '127.0.0.1', port: 0 })
}
