/**
 * The task dashboard over HTTP (no browser): every tab, the run filters and search, the task
 * detail, the writes (retry, cancel, bulk retry, replay window, queue edit) with CSRF, audit
 * and clear 4xx answers that change nothing, and escaping of hostile names, tags and logs.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { taskLog } from '../../../src/tasks/index.js'
import { deferred, waitForStatus } from '../helpers.js'
import { adminApp, login } from './helpers.js'

const AUTH: [string, string] = ['admin', 's3cret']
const HOSTILE = '<img src=x onerror=alert(1)>'

let app: FastifyInstance | null = null
afterEach(async () => {
  await app?.close()
  app = null
})

/** An app with auth, a logged-in session, and tasks that succeeded and failed. */
async function seeded(options: { auth?: boolean } = {}) {
  const mounted = await adminApp(options.auth === false ? {} : { auth: AUTH })
  app = mounted.app
  const { manager } = mounted
  const session = options.auth === false ? { cookie: '', csrf: '' } : await login(mounted.app)
  const ok = manager.task({ name: 'send_email', queue: 'default' }, () => {
    taskLog(`sent ${HOSTILE}`, { level: 'info' })
  })
  let failing = true
  const bad = manager.task({ name: HOSTILE }, () => {
    taskLog(`about to fail <script>alert(2)</script>`, { level: 'warning' })
    if (failing) throw new Error(`broken ${HOSTILE}`)
  })
  const okId = await manager.addTask(ok, [], { tags: { region: 'eu', [HOSTILE]: HOSTILE } })
  const badIds = [await manager.addTask(bad, []), await manager.addTask(bad, [])]
  for (const id of [okId, ...badIds]) await waitForStatus(manager, id)
  return {
    manager,
    okId,
    badIds,
    succeedNow: () => {
      failing = false
    },
    get: (url: string, headers: Record<string, string> = {}) =>
      mounted.app.inject({ url, headers: { cookie: session.cookie, ...headers } }),
    post: (url: string, form: string, headers: Record<string, string> = {}) =>
      mounted.app.inject({
        method: 'POST',
        url,
        payload: form,
        headers: {
          cookie: session.cookie,
          'content-type': 'application/x-www-form-urlencoded',
          'x-csrf-token': session.csrf,
          'hx-request': 'true',
          ...headers,
        },
      }),
  }
}

const toastOf = (headers: Record<string, unknown>) =>
  JSON.parse(String(headers['hx-trigger'])) as { 'ui-toast'?: { message: string; kind: string } }

describe('task dashboard pages', () => {
  it('renders every tab with the layout, the Audit tab only with auth', async () => {
    const { get } = await seeded()
    for (const [path, heading] of [
      ['/tasks/dashboard', 'Runs'],
      ['/tasks/dashboard/tasks', 'Registered functions'],
      ['/tasks/dashboard/schedules', 'Schedules'],
      ['/tasks/dashboard/queues', 'Queues'],
      ['/tasks/dashboard/dead-letters', 'Dead Letters'],
      ['/tasks/dashboard/audit', 'Audit'],
    ] as const) {
      const page = await get(path)
      expect(page.statusCode, path).toBe(200)
      expect(page.headers['content-security-policy']).toContain("script-src 'self'")
      expect(page.body).toContain(`>${heading}</h`)
      expect(page.body).toContain('href="/tasks/dashboard/audit"')
    }
    const audit = await get('/tasks/dashboard/audit')
    // Logins are not audited: the tab holds changes only.
    expect(audit.body).not.toContain('>login</td>')
    expect(audit.body).toContain('No audit entries yet.')
  })

  it('has no Audit tab without auth, and its URL is a 404', async () => {
    const { get } = await seeded({ auth: false })
    const page = await get('/tasks/dashboard')
    expect(page.body).not.toContain('href="/tasks/dashboard/audit"')
    expect((await get('/tasks/dashboard/audit')).statusCode).toBe(404)
  })

  it('sends a page without a session to the login view; an htmx fragment gets a 401', async () => {
    const { app: instance } = await adminApp({ auth: AUTH })
    app = instance
    const page = await instance.inject('/tasks/dashboard/queues')
    expect(page.statusCode).toBe(303)
    expect(page.headers.location).toBe('/tasks/auth/login?next=%2Ftasks%2Fdashboard%2Fqueues')
    const fragment = await instance.inject({
      url: '/tasks/dashboard/runs',
      headers: { 'hx-request': 'true' },
    })
    // the page shows "Session expired — log in" with its own address as `next`, not the fragment's
    expect(fragment.statusCode).toBe(401)
    expect(fragment.headers['hx-redirect']).toBeUndefined()
    const form = await instance.inject('/tasks/auth/login')
    expect(form.body).toContain('action="/tasks/auth/login"')
  })

  it('escapes hostile task names, tags, errors and log lines everywhere', async () => {
    const { get, badIds, okId } = await seeded()
    const pages = await Promise.all([
      get('/tasks/dashboard?range=all'),
      get('/tasks/dashboard/tasks'),
      get('/tasks/dashboard/dead-letters'),
      get(`/tasks/dashboard/task/${badIds[0]!}`),
      get(`/tasks/dashboard/task/${okId}`),
    ])
    for (const page of pages) {
      expect(page.statusCode).toBe(200)
      // Inside a double-quoted attribute `<` is text; elsewhere it must be escaped.
      const outsideAttributes = page.body.replace(/="[^"]*"/g, '=""')
      expect(outsideAttributes).not.toContain('<img src=x')
      expect(outsideAttributes).not.toContain('<script>alert')
      expect(page.body).not.toMatch(/="[^"]*"[^"\s>/][^>]*onerror/)
    }
    expect(pages[3].body).toContain('&lt;img src=x onerror=alert(1)>')
    expect(pages[3].body).toContain('about to fail &lt;script>')
    expect(pages[4].body).toContain('region=eu')
  })

  it('filters runs by status, queue, range and search qualifiers, and says what it cannot use', async () => {
    const { get, okId, badIds } = await seeded()
    const failed = await get('/tasks/dashboard?status=failed&range=all')
    expect(failed.body).toContain(badIds[0]!)
    expect(failed.body).not.toContain(`value="${okId}"`)
    expect(failed.body).not.toContain(`>${okId}<`)
    const byFunc = await get('/tasks/dashboard/runs?q=func%3Asend_email')
    expect(byFunc.body).toContain(`>${okId}<`)
    expect(byFunc.body).not.toContain(`>${badIds[0]!}<`)
    const byTag = await get('/tasks/dashboard/runs?q=tag%3Aregion%3Deu')
    expect(byTag.body).toContain(`>${okId}<`)
    expect(byTag.body).not.toContain(`>${badIds[1]!}<`)
    const byPrefix = await get(`/tasks/dashboard/runs?q=${badIds[1]!.slice(0, 8)}`)
    expect(byPrefix.body).toContain(`>${badIds[1]!}<`)
    const otherQueue = await get('/tasks/dashboard/runs?queue=nope')
    expect(otherQueue.body).toContain('No tasks match')
    const bad = await get('/tasks/dashboard/runs?q=status%3Abogus')
    expect(bad.statusCode).toBe(200)
    expect(bad.body).toContain('Unknown status')
  })

  it('serves the live fragments: a row by key, the metrics, and 204 for a record that is gone', async () => {
    const { get, okId } = await seeded()
    const row = await get(`/tasks/dashboard/runs/row?key=${okId}`)
    expect(row.body).toMatch(/^<tr id="run-[0-9a-f]{16}" data-live="task"/)
    expect((await get('/tasks/dashboard/runs/row?key=missing')).statusCode).toBe(204)
    const metrics = await get('/tasks/dashboard/metrics?range=1h')
    expect(metrics.body).toContain('id="run-metrics"')
    expect(metrics.body).toContain('success rate')
    expect(metrics.body).toMatch(/<strong>67%<\/strong>|<strong>33(\.3)?%<\/strong>/)
  })
})

describe('task dashboard actions', () => {
  it('retries a failed task from its detail (CSRF required, audited) and refuses a finished one', async () => {
    const { get, post, manager, badIds, okId, succeedNow } = await seeded()
    const url = `/tasks/dashboard/task/${badIds[0]!}/retry`
    expect((await post(url, '', { 'x-csrf-token': 'forged' })).statusCode).toBe(403)
    succeedNow()
    const retried = await post(url, '')
    expect(retried.statusCode).toBe(200)
    const target = new URL(String(retried.headers['hx-redirect']), 'http://x')
    expect(target.searchParams.get('retried_from')).toBe(badIds[0])
    const newId = decodeURIComponent(target.pathname.split('/').at(-1)!)
    expect((await waitForStatus(manager, newId)).status).toBe('success')
    const audit = await get('/tasks/audit')
    expect(audit.json<{ items: { action: string; task_id: string }[] }>().items[0]).toMatchObject({
      action: 'retry',
      task_id: badIds[0],
    })
    const page = await get(target.pathname + target.search)
    expect(page.body).toContain(`Retrying task ${badIds[0]!} as this task.`)
    const refused = await post(`/tasks/dashboard/task/${okId}/retry`, '')
    expect(refused.statusCode).toBe(400)
    expect(toastOf(refused.headers)['ui-toast']?.kind).toBe('error')
  })

  it('cancels a running task and answers with its updated detail', async () => {
    const { post, manager } = await seeded()
    const gate = deferred()
    const slow = manager.task({ name: 'slow' }, () => gate.promise)
    const id = await manager.addTask(slow, [])
    await waitForStatus(manager, id, ['running'])
    const cancelled = await post(`/tasks/dashboard/task/${id}/cancel`, '')
    expect(cancelled.statusCode).toBe(200)
    expect(cancelled.body).toContain('id="task-detail"')
    expect((await waitForStatus(manager, id)).status).toBe('cancelled')
    gate.resolve()
  })

  it('bulk-retries selected rows with per-item counts; bad selections are a 400 that changes nothing', async () => {
    const { post, manager, badIds, okId } = await seeded()
    const before = (await manager.listTasks({ perPage: 100 })).total
    for (const form of ['', 'task_ids=%3Cbad%3E', `task_ids=${'x'.repeat(200)}`]) {
      const refused = await post('/tasks/dashboard/bulk-retry', form)
      expect(refused.statusCode).toBe(400)
    }
    expect((await manager.listTasks({ perPage: 100 })).total).toBe(before)
    const form = [...badIds, okId].map((id) => `task_ids=${id}`).join('&')
    const answer = await post('/tasks/dashboard/bulk-retry', form)
    expect(answer.statusCode).toBe(200)
    expect(toastOf(answer.headers)['ui-toast']?.message).toBe(
      'Retried 2 tasks; skipped 1 (1 not retryable).',
    )
    expect((await manager.listTasks({ perPage: 100 })).total).toBe(before + 2)
  })

  it('replays a window after a confirmation that counts its failed tasks', async () => {
    const { get, post, manager } = await seeded()
    const dialog = await get('/tasks/dashboard/dead-letters/replay?window=6h')
    expect(dialog.body).toContain('Retry 2 failed tasks in the last 6 h?')
    expect((await post('/tasks/dashboard/dead-letters/replay', 'window=5y')).statusCode).toBe(400)
    const answer = await post('/tasks/dashboard/dead-letters/replay', 'window=6h')
    expect(toastOf(answer.headers)['ui-toast']?.message).toBe('Retried 2 tasks.')
    expect((await manager.listTasks({ perPage: 100 })).total).toBe(5)
    const empty = await get('/tasks/dashboard/dead-letters?window=1h')
    expect(empty.body).toContain('Replay window')
  })

  it('edits a queue inline: invalid input is a 422 with the message and the typed value, unchanged config', async () => {
    const { post, manager } = await seeded()
    const invalid = await post('/tasks/dashboard/queues/default', 'concurrency=0&max_size=lots')
    expect(invalid.statusCode).toBe(422)
    expect(invalid.body).toContain('Enter a whole number from 1 to 100,000')
    expect(invalid.body).toContain('value="lots"')
    expect(invalid.body).toContain('aria-invalid="true"')
    const before = manager.queueStats().find((queue) => queue.name === 'default')!
    const saved = await post('/tasks/dashboard/queues/default', 'concurrency=3&max_size=unlimited')
    expect(saved.statusCode).toBe(200)
    expect(saved.body).toContain('value="3"')
    expect(manager.queueStats().find((queue) => queue.name === 'default')).toMatchObject({
      concurrency: 3,
      max_size: null,
    })
    expect(before.concurrency).not.toBe(3)
    expect((await post('/tasks/dashboard/queues/nope', 'concurrency=3')).statusCode).toBe(404)
  })
})
