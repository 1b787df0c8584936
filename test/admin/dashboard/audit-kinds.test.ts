import { describe, expect, it } from 'vitest'
import {
  AUDIT_WINDOW,
  combinedAudit,
  kindOf,
  parseKind,
} from '../../../src/admin/dashboard/audit-kinds.js'
import type { ConsoleAuditSource } from '../../../src/common/console-registry.js'
import type { AuditEntry } from '../../../src/core/audit-entry.js'
import type { AuditLogQuery } from '../../../src/core/audit-log.js'

const routeEntry = (i: number, action = 'disable'): AuditEntry => ({
  id: `r${i}`,
  timestamp: new Date(i * 1000).toISOString(),
  route: 'GET:/orders',
  service: 'shop',
  action,
  actor: i % 2 === 0 ? 'ada' : 'bob',
  platform: 'api',
  reason: '',
  previous_status: 'active',
  new_status: 'disabled',
})

/** A route-control log of `entries` (newest first), paged and filtered like the store. */
function routeLog(entries: AuditEntry[]) {
  const calls: AuditLogQuery[] = []
  const list = (query: AuditLogQuery) => {
    calls.push(query)
    const matching = entries.filter((e) => query.actor === undefined || e.actor === query.actor)
    const perPage = query.perPage ?? 50
    const start = ((query.page ?? 1) - 1) * perPage
    return Promise.resolve({
      items: matching.slice(start, start + perPage),
      total: matching.length,
      page: query.page ?? 1,
      per_page: perPage,
    })
  }
  return { list, calls }
}

const taskSource = (n: number, start = 0): ConsoleAuditSource => ({
  newest(limit) {
    const items = Array.from({ length: n }, (_, i) => ({
      id: String(i),
      timestamp: (start + n - i) * 1000 + 500,
      action: 'retry',
      actor: 'ada',
      subject: `t${i}`,
      href: null,
      detail: '',
    }))
    return Promise.resolve({ items: items.slice(0, limit), total: n })
  },
})

describe('audit kinds', () => {
  it('classifies actions and reads only known kinds', () => {
    expect(kindOf('flag_updated')).toBe('flags')
    expect(kindOf('segment_deleted')).toBe('flags')
    expect(kindOf('global_rl_set')).toBe('rate-limits')
    expect(kindOf('rl_reset')).toBe('rate-limits')
    expect(kindOf('service_maintenance_off')).toBe('maintenance')
    expect(kindOf('api_token_created')).toBe('keys')
    expect(kindOf('maintenance_on')).toBe('routes')
    expect(parseKind('tasks')).toBe('tasks')
    expect(parseKind('nope')).toBe('')
  })

  it('merges both logs newest first and pages the result', async () => {
    const entries = [3, 2, 1].map((i) => routeEntry(i))
    const { list } = routeLog(entries)
    const page = await combinedAudit(list, taskSource(2), {
      routes: {},
      kind: '',
      page: 1,
      perPage: 3,
    })
    expect(page.total).toBe(5)
    expect(
      page.items.map((row) => (row.half === 'routes' ? row.entry.id : `t:${row.entry.id}`)),
    ).toEqual(['r3', 't:0', 'r2'])
    expect(page.truncated).toBe(false)
  })

  it('filters by kind and actor; a route filter leaves task entries out', async () => {
    const entries = [routeEntry(4, 'flag_updated'), routeEntry(3), routeEntry(2, 'rl_reset')]
    const { list } = routeLog(entries)
    const flags = await combinedAudit(list, taskSource(3), {
      routes: {},
      kind: 'flags',
      page: 1,
      perPage: 50,
    })
    expect(flags.items.map((row) => row.entry.action)).toEqual(['flag_updated'])
    const tasks = await combinedAudit(list, taskSource(3), {
      routes: { actor: 'ada' },
      kind: 'tasks',
      page: 1,
      perPage: 50,
    })
    expect(tasks.items.every((row) => row.half === 'tasks')).toBe(true)
    expect(tasks.total).toBe(3)
    const byRoute = await combinedAudit(list, taskSource(3), {
      routes: { route: 'GET:/orders' },
      kind: '',
      page: 1,
      perPage: 50,
    })
    expect(byRoute.items.every((row) => row.half === 'routes')).toBe(true)
  })

  it('reads at most the window of each log, and says so', async () => {
    const entries = Array.from({ length: AUDIT_WINDOW + 20 }, (_, i) => routeEntry(5000 - i))
    const { list, calls } = routeLog(entries)
    const page = await combinedAudit(list, null, {
      routes: {},
      kind: 'routes',
      page: 1,
      perPage: 50,
    })
    expect(page.truncated).toBe(true)
    expect(page.total).toBe(AUDIT_WINDOW)
    expect(calls.length).toBe(AUDIT_WINDOW / 500)
  })
})
