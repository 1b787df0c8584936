import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { buildDemoApp } from '../src/demo/app.js'

describe('the demo app', () => {
  it('serves every decorator as documented and its controls change states', async () => {
    const app = await buildDemoApp()
    expect((await app.inject('/payments')).statusCode).toBe(503)
    expect((await app.inject('/legacy')).json().error.code).toBe('ROUTE_DISABLED')
    expect((await app.inject('/v1/users')).headers.sunset).toBe('Sat, 01 Jan 2028 00:00:00 GMT')
    expect((await app.inject('/health')).statusCode).toBe(200)
    expect(
      (await app.inject({ method: 'POST', url: '/_demo/disable?route=GET:/orders' })).statusCode,
    ).toBe(200)
    expect((await app.inject('/orders')).statusCode).toBe(503)
    const bad = await app.inject({ method: 'POST', url: '/_demo/disable?route=orders' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('VALIDATION_ERROR')
    await app.close()
  })

  it('shows rate limits, flags, background tasks and the admin API', async () => {
    const app = await buildDemoApp()
    const codes: number[] = []
    for (let i = 0; i < 8; i++) codes.push((await app.inject('/search')).statusCode)
    expect(codes).toEqual([200, 200, 200, 200, 200, 200, 200, 429])
    const ada = await app.inject({ url: '/checkout', headers: { 'x-user': 'ada' } })
    expect(ada.json()).toEqual({ user: 'ada', new_checkout: true, reason: 'TARGET_MATCH' })
    const order = await app.inject({ method: 'POST', url: '/orders', payload: { id: 'o-1' } })
    expect(order.statusCode).toBe(202)
    const taskId = order.json<{ task_id: string }>().task_id
    await expect
      .poll(
        async () => (await app.inject(`/_demo/tasks/${taskId}`)).json<{ status: string }>().status,
      )
      .toBe('success')
    // The task admin at /tasks, behind the demo's login.
    expect((await app.inject('/tasks/metrics')).statusCode).toBe(401)
    const session = await app.inject({
      method: 'POST',
      url: '/tasks/auth/login',
      payload: 'username=admin&password=switchyard',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(session.statusCode).toBe(303)
    const cookie = String(session.headers['set-cookie']).split(';')[0]!
    const record = await app.inject({ url: `/tasks/${taskId}`, headers: { cookie } })
    expect(record.json<{ status: string }>().status).toBe('success')
    const login = await app.inject({
      method: 'POST',
      url: '/switchyard/api/auth/login',
      payload: { username: 'admin', password: 'switchyard' },
    })
    expect(login.statusCode).toBe(200)
    const routes = await app.inject({
      url: '/switchyard/api/routes?per_page=100',
      headers: { authorization: `Bearer ${login.json<{ token: string }>().token}` },
    })
    expect(routes.json<{ items: { route: string }[] }>().items.map((r) => r.route)).toContain(
      'GET:/search',
    )
    await app.close()
  })

  it('npm start listens on PORT and prints what to try', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/server.ts'], {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = ''
        const timer = setTimeout(() => reject(new Error(`demo did not start: ${text}`)), 15_000)
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString()
          if (text.includes('_demo/global-off')) {
            clearTimeout(timer)
            resolve(text)
          }
        })
        child.on('exit', (code) => reject(new Error(`demo exited with ${code}: ${text}`)))
      })
      expect(output).toMatch(/switchyard demo listening on http:\/\/127\.0\.0\.1:[1-9]\d*/)
      expect(output).toContain('curl -i')
    } finally {
      child.kill('SIGTERM')
    }
  })
})
