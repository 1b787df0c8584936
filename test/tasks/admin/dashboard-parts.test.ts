/**
 * The task dashboard's pure parts: the search line with qualifiers, the queue form's mapping
 * (empty = unchanged, `unlimited` = null, ranges), and the chart's time buckets.
 */
import { describe, expect, it } from 'vitest'
import { bucketSeries, bucketWidth } from '../../../src/tasks/admin/dashboard/chart.js'
import { Pager } from '../../../src/ui/index.js'
import { parseQueueForm } from '../../../src/tasks/admin/dashboard/queues.js'
import { parseRunSearch } from '../../../src/tasks/admin/dashboard/search.js'

describe('run search', () => {
  it('splits qualifiers from plain text', () => {
    expect(
      parseRunSearch('  status:failed func:send_email queue:emails tag:region=eu tag:a=b=c 3f2a '),
    ).toEqual({
      q: '3f2a',
      status: 'failed',
      funcName: 'send_email',
      queue: 'emails',
      tags: [
        ['region', 'eu'],
        ['a', 'b=c'],
      ],
      problems: [],
    })
  })

  it('reports what it cannot use instead of guessing', () => {
    const search = parseRunSearch(`status:nope tag:novalue tag:=x ${'y'.repeat(300)}`)
    expect(search.status).toBeUndefined()
    expect(search.tags).toEqual([])
    expect(search.q).toBeUndefined()
    expect(search.problems).toHaveLength(4)
    expect(search.problems[0]).toContain('Unknown status "nope"')
  })

  it('takes at most ten tags', () => {
    const line = Array.from({ length: 12 }, (_, i) => `tag:k${i}=v`).join(' ')
    const search = parseRunSearch(line)
    expect(search.tags).toHaveLength(10)
    expect(search.problems).toEqual(['At most 10 tags per search.', 'At most 10 tags per search.'])
  })
})

describe('queue form', () => {
  it('maps empty to unchanged and "unlimited" to null', () => {
    expect(parseQueueForm({ concurrency: '', max_size: 'Unlimited' })).toEqual({
      ok: true,
      change: { max_size: null },
    })
    expect(parseQueueForm({ concurrency: ' 4 ', max_size: '0' })).toEqual({
      ok: true,
      change: { concurrency: 4, max_size: 0 },
    })
  })

  it('refuses out-of-range and non-numeric values field by field', () => {
    const result = parseQueueForm({ concurrency: '0', max_size: '1e3' })
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(Object.keys(result.errors).sort()).toEqual(['concurrency', 'max_size'])
    }
    expect(parseQueueForm({ concurrency: '100001' }).ok).toBe(false)
    expect(parseQueueForm({ concurrency: ['1', '2'] })).toEqual({ ok: true, change: {} })
    expect(parseQueueForm(null)).toEqual({ ok: true, change: {} })
  })
})

describe('chart buckets', () => {
  const at = (iso: string) => Date.parse(iso)
  it('uses one-minute buckets for an hour and sums minutes into wider ones', () => {
    const from = at('2026-11-21T20:00:00Z')
    const minute = (iso: string, success: number, failed: number) => ({
      minute: iso,
      success,
      failed,
      p95: null,
    })
    const hour = bucketSeries([minute('2026-11-21T20:30:00Z', 3, 1)], from, from + 3_600_000)
    expect(hour).toHaveLength(60)
    expect(hour[30]).toEqual({ start: at('2026-11-21T20:30:00Z'), success: 3, failed: 1 })
    const week = bucketSeries(
      [minute('2026-11-22T01:00:00Z', 1, 0), minute('2026-11-22T01:59:00Z', 2, 2)],
      from,
      from + 7 * 86_400_000,
    )
    expect(week.length).toBeLessThanOrEqual(96)
    expect(week.reduce((sum, bucket) => sum + bucket.success + bucket.failed, 0)).toBe(5)
    expect(bucketSeries([minute('2026-11-01T00:00:00Z', 9, 9)], from, from + 60_000)).toEqual([
      { start: from, success: 0, failed: 0 },
    ])
  })

  it('has a bucket width per range, and takes a series already in those buckets as it is', () => {
    const from = at('2026-11-21T20:07:00Z')
    const widths = [1, 6, 24, 168].map((hours) => bucketWidth(from, from + hours * 3_600_000))
    expect(widths).toEqual([60_000, 300_000, 900_000, 7_200_000])
    const day = bucketSeries(
      [{ minute: '2026-11-22T08:15:00Z', success: 40, failed: 2, p95: null }],
      from,
      from + 86_400_000,
    )
    expect(day.find((bucket) => bucket.success > 0)).toEqual({
      start: at('2026-11-22T08:15:00Z'),
      success: 40,
      failed: 2,
    })
  })
})

describe('pager', () => {
  it('says "≥" for a capped count and still offers the next page', () => {
    const href = (page: number) => `/runs?page=${page}`
    const html = (element: JSX.Element): string => {
      if (typeof element !== 'string') throw new Error('The pager renders synchronously.')
      return element
    }
    const capped = html(Pager({ page: 1, perPage: 50, total: 1000, totalCapped: true, href }))
    expect(capped).toContain('1–50 of')
    expect(capped).toContain('≥ 1000')
    expect(capped).toContain('href="/runs?page=2"')
    const last = html(Pager({ page: 20, perPage: 50, total: 1000, totalCapped: true, href }))
    expect(last).toContain('href="/runs?page=21"')
    const exact = html(Pager({ page: 20, perPage: 50, total: 1000, href }))
    expect(exact).not.toContain('≥')
    expect(exact).not.toContain('page=21')
  })
})
