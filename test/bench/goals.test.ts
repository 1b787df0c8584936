/**
 * The goal check of `npm run bench -- --check`: figures read from results files, judged with a
 * 5 % tolerance, missing files or cases reported as not measured.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkGoals, field, GOALS, judge, type Goal } from '../../bench/lib/goals.js'

const atLeast = { kind: 'min', bound: 1 } as Goal
const atMost = { kind: 'max', bound: 1.5 } as Goal

describe('bench goals', () => {
  let dir = ''
  afterEach(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true })
    dir = ''
  })

  it('judges a minimum and a maximum with a 5 % tolerance', () => {
    expect(judge(atLeast, 1.02)).toBe('met')
    expect(judge(atLeast, 0.96)).toBe('near')
    expect(judge(atLeast, 0.94)).toBe('missed')
    expect(judge(atMost, 1.4)).toBe('met')
    expect(judge(atMost, 1.55)).toBe('near')
    expect(judge(atMost, 1.6)).toBe('missed')
    expect(judge(atLeast, undefined)).toBe('not measured')
  })

  it('reads only finite numbers at own keys', () => {
    expect(field({ a: { b: 2 } }, 'a', 'b')).toBe(2)
    expect(field({ a: { b: '2' } }, 'a', 'b')).toBeUndefined()
    expect(field({ a: {} }, 'a', 'toString')).toBeUndefined()
    expect(field({ a: [{ b: Number.NaN }] }, 'a', 0, 'b')).toBeUndefined()
  })

  it('checks the results files: harness rows, nested figures, missing files', () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-goals-'))
    const results = {
      'http-overhead': {
        rows: [
          { case: 'fastify', median_ratio: 1 },
          { case: 'switchyard-memory', median_ratio: 0.99 },
          { case: 'switchyard-redis', median_ratio: 0.9 },
        ],
      },
      'rate-limit-redis': {
        rows: [
          { case: 'bare', median_rps: 40_000 },
          { case: 'switchyard-redis', median_rps: 30_000 },
        ],
      },
      'tasks-store': {
        peers: {
          postgres_vs_pg_boss: { enqueue: 0.6, e2e: 5.4 },
          redis_vs_bullmq: { enqueue: 1.5 },
        },
      },
      'tasks-flows': {
        sqlite: {
          release_ms: { median: 40, max: 120 },
          ratio_flow_to_manager_batch: 0.9,
          ratio_store_flow_to_batch: 0.7,
          // Informative only: the manager's flow against the bare store batch is not a goal.
          ratio_flow_to_batch: 0.5,
        },
        redis: { release_ms: { median: 30, max: 60 } },
      },
      'sdk-propagation-5x10': { ratio_to_floor_p99: 1.55 },
      'sdk-propagation-2x25': { ratio_to_floor_p99: 1.2 },
      startup: {
        rows: [
          { case: 'fastify', median_ratio: 1 },
          { case: 'fastify-switchyard/fastify', median_ratio: 0.95 },
          { case: 'fastify-switchyard', median_ratio: 2.67 },
          { case: 'fastify-switchyard/tasks', median_ratio: 1.1 },
        ],
      },
      'sdk-request-cost': {
        rows: [
          { case: 'fastify', median_ratio: 1 },
          { case: 'switchyard-sdk', median_ratio: 0.99 },
        ],
      },
    }
    for (const [name, content] of Object.entries(results)) {
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(content))
    }
    const verdicts = new Map(checkGoals(dir).map((v) => [v.goal.label, v]))
    expect(verdicts.size).toBe(GOALS.length)
    expect(verdicts.get('route states, memory store vs bare Fastify')?.status).toBe('met')
    expect(verdicts.get('route states, Redis store vs bare Fastify')).toMatchObject({
      value: 0.9,
      status: 'missed',
    })
    expect(verdicts.get('limits on Redis vs bare')).toMatchObject({ value: 0.75, status: 'met' })
    expect(verdicts.get('durable tasks end to end, SQLite (tasks/s)')?.status).toBe('not measured')
    expect(verdicts.get('durable enqueue, PostgreSQL vs pg-boss 10.x insert')).toMatchObject({
      value: 0.6,
      status: 'missed',
    })
    expect(verdicts.get('durable tasks end to end, PostgreSQL vs pg-boss 10.x')?.status).toBe('met')
    expect(verdicts.get('durable enqueue, Redis vs BullMQ addBulk')?.status).toBe('missed')
    expect(verdicts.get('durable tasks end to end, Redis vs BullMQ')?.status).toBe('not measured')
    // A bound to stay under: 1.55× misses 1.5× by less than the tolerance.
    expect(
      verdicts.get(
        'multi-service: a change reaching 50 SDK apps (5 × 10), p99 vs the socket floor',
      ),
    ).toMatchObject({ value: 1.55, status: 'near' })
    expect(
      verdicts.get('multi-service: a change reaching 50 SDK apps (2 × 25), p99 vs the socket floor')
        ?.status,
    ).toBe('met')
    // Every entry point has its start-up goal; one not in the file is not measured.
    expect(
      verdicts.get('start-up: import switchyard/fastify vs import fastify (CPU)')?.status,
    ).toBe('met')
    expect(verdicts.get('start-up: import switchyard vs import fastify (CPU)')).toMatchObject({
      value: 2.67,
      status: 'missed',
    })
    expect(verdicts.get('start-up: import switchyard/tasks vs import fastify (CPU)')?.status).toBe(
      'met',
    )
    expect(
      verdicts.get('start-up: import switchyard/tasks/fastify vs import fastify (CPU)')?.status,
    ).toBe('not measured')
    expect(verdicts.get('multi-service: an SDK app vs bare Fastify')?.status).toBe('met')
    // Flows: a latency to stay under, the worst round judged apart from the median.
    const flow = (what: string) => verdicts.get(`flow of 1 + 1,000 on ${what}`)
    expect(flow('SQLite: last child end → parent start, median (ms)')?.status).toBe('met')
    expect(flow('SQLite: last child end → parent start, max (ms)')).toMatchObject({
      value: 120,
      status: 'missed',
    })
    expect(flow('SQLite: manager.flow vs 1,001 addTask in one batch')).toMatchObject({
      value: 0.9,
      status: 'met',
    })
    expect(flow("SQLite: the store's flow write vs its batch of 1,001")).toMatchObject({
      value: 0.7,
      status: 'missed',
    })
    expect(flow('Redis: last child end → parent start, max (ms)')?.status).toBe('met')
    expect(flow('Redis: manager.flow vs 1,001 addTask in one batch')?.status).toBe('not measured')
  })
})
