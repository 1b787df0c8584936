/**
 * Drill 4 in short form: every route of both admins, every method, each credential variant and
 * a few path variants answer as their route class requires, and nothing changes; every route
 * answers each role as its configuration requires, and no refusal changes anything. Also the bug
 * the sweep found: a HEAD request to an event stream was never answered (Node holds the head
 * of a body-less answer until it ends) and held a place among the stream's clients.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { classOf, pathVariants, sweep } from '../../drill/drills/auth-sweep.js'
import {
  loginBoth,
  MOUNTS,
  send,
  startAdmins,
  TASK_COOKIE,
  type Admins,
} from '../../drill/lib/admins.js'

const opened: Admins[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((admins) => admins.close()))
})

describe('admin auth sweep (short form)', () => {
  it('answers every route × method × credential as its class requires, changing nothing', async () => {
    const { figures, mismatches } = await sweep('short')
    expect(mismatches).toEqual([])
    expect(figures.filter((figure) => !figure.ok)).toEqual([])
    const swept = figures.find((figure) => figure.name.startsWith('routes swept'))
    // Both admins' tables were read: far more than a handful of routes.
    expect(Number(swept?.value)).toBeGreaterThan(100)
    // The role matrix ran, every principal with requests, and no refusal changed anything.
    const value = (name: string) => figures.find((figure) => figure.name === name)?.value
    expect(value('role matrix: state changes after a refusal')).toBe(0)
    expect(Number(value('role matrix: refusals'))).toBeGreaterThan(100)
    const tallyOf = (name: string) => String(value(name)).split(' / ').map(Number)
    for (const principal of ['viewer', 'operator', 'admin']) {
      for (const kind of ['session', 'token']) {
        const [requests, refused] = tallyOf(
          `route-control admin, ${principal} ${kind}: requests / refused`,
        )
        expect(requests).toBeGreaterThan(100)
        expect(refused! > 0).toBe(principal !== 'admin')
      }
      const [requests, refused] = tallyOf(`task admin, ${principal} session: requests / refused`)
      expect(requests).toBeGreaterThan(30)
      expect(refused! > 0).toBe(principal !== 'admin')
    }
    // The service token: more requests than routes (the service-scoped ones twice), refused
    // everywhere outside its own service.
    const [admin] = tallyOf('route-control admin, admin token: requests / refused')
    const [requests, refused] = tallyOf(
      'route-control admin, billing service token: requests / refused',
    )
    expect(requests).toBeGreaterThan(admin! + 20)
    expect(refused).toBeGreaterThan(100)
  }, 120_000)

  it('classifies routes from their own configuration', async () => {
    const admins = await startAdmins()
    opened.push(admins)
    const find = (method: string, url: string) => {
      const route = admins.routes.find((each) => each.method === method && each.url === url)
      if (route === undefined) throw new Error(`${method} ${url} not recorded`)
      return classOf(route)
    }
    expect(find('POST', `${MOUNTS.admin}/api/auth/login`)).toBe('public')
    expect(find('GET', `${MOUNTS.admin}/api/flags`)).toBe('json')
    expect(find('GET', `${MOUNTS.admin}/flags`)).toBe('page')
    expect(find('POST', `${MOUNTS.admin}/ofrep/v1/evaluate/flags`)).toBe('ofrep')
    expect(find('GET', `${MOUNTS.tasks}/dashboard`)).toBe('page')
    expect(find('GET', `${MOUNTS.tasks}/dashboard/stream`)).toBe('json')
    expect(pathVariants('/tasks/queues')).toEqual(
      expect.arrayContaining([
        '/tasks/queues/',
        '//tasks/queues',
        '/tasks/%71ueues',
        '/TASKS/QUEUES',
      ]),
    )
  })

  it('serves the task stream without credentials only with publicStream', async () => {
    const admins = await startAdmins({ publicStream: true })
    opened.push(admins)
    const answer = await send(admins.port, 'GET', `${MOUNTS.tasks}/dashboard/stream`)
    expect(answer.status).toBe(200)
    expect(answer.contentType).toMatch(/^text\/event-stream/)
  })

  it('answers a HEAD request to each event stream with its head, and ends it', async () => {
    const admins = await startAdmins()
    opened.push(admins)
    const { admin: token, tasks } = await loginBoth(admins)
    for (const [path, headers] of [
      [`${MOUNTS.admin}/api/events`, { authorization: `Bearer ${token}` }],
      [`${MOUNTS.tasks}/dashboard/stream`, { cookie: `${TASK_COOKIE}=${tasks}` }],
    ] as const) {
      // `send` rejects when no answer comes within its deadline.
      const answer = await send(admins.port, 'HEAD', path, headers, undefined, 3000)
      expect(answer.status).toBe(200)
      expect(answer.contentType).toMatch(/^text\/event-stream/)
    }
  })
})
