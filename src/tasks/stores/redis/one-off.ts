/**
 * One-off schedules on Redis (the {@link OneOffScheduleStore} port; see it for the semantics): a hash per entry and a sorted set by due time; a claim and a completion are Lua
 * scripts, so two instances can never both win one.
 */
import { randomUUID } from 'node:crypto'
import type { ClaimedOneOff, LeaseRequest, OneOffEntry, OneOffScheduleStore } from '../ports.js'
import { checkDebounced, checkLease, checkOneOff, oneOffBodyHead } from '../rows.js'
import type { RedisOps } from './ops.js'

async function upsertOneOff(ops: RedisOps, entry: OneOffEntry): Promise<void> {
  checkOneOff(entry)
  await ops.run(
    'upsert-one-off',
    [ops.key('once:', entry.run_key), ops.key('once-due')],
    [entry.run_key, entry.run_at, JSON.stringify(entry)],
  )
}

async function debounceOneOff(ops: RedisOps, entry: OneOffEntry): Promise<string> {
  const taskId = checkDebounced(entry)
  const held = await ops.run(
    'debounce-one-off',
    [ops.key('once:', entry.run_key), ops.key('once-due')],
    [entry.run_key, entry.run_at, oneOffBodyHead(entry), taskId],
  )
  return String(held)
}

async function cancelOneOff(ops: RedisOps, runKey: string): Promise<boolean> {
  const deleted = Number(await ops.call('DEL', ops.key('once:', runKey)))
  await ops.call('ZREM', ops.key('once-due'), runKey)
  return deleted > 0
}

async function listOneOff(ops: RedisOps, before?: number): Promise<OneOffEntry[]> {
  const max = before === undefined ? '+inf' : `(${before}`
  const keys = (await ops.call('ZRANGE', ops.key('once-due'), '-inf', max, 'BYSCORE')) as string[]
  const entries: OneOffEntry[] = []
  for (const runKey of keys) {
    const body = (await ops.call('HGET', ops.key('once:', runKey), 'body')) as string | null
    if (body !== null) entries.push(JSON.parse(body) as OneOffEntry)
  }
  return entries
}

async function countOneOff(ops: RedisOps): Promise<number> {
  return Number(await ops.call('ZCARD', ops.key('once-due')))
}

async function fetchOneOffWindow(
  ops: RedisOps,
  until: number,
  now: number,
  limit: number,
): Promise<OneOffEntry[]> {
  const entries: OneOffEntry[] = []
  let offset = 0
  while (entries.length < limit) {
    const keys = (await ops.call(
      'ZRANGE',
      ops.key('once-due'),
      '-inf',
      until,
      'BYSCORE',
      'LIMIT',
      offset,
      200,
    )) as string[]
    if (keys.length === 0) break
    offset += keys.length
    for (const runKey of keys) {
      const [claimedBy, leaseUntil, body] = (await ops.call(
        'HMGET',
        ops.key('once:', runKey),
        'claimed_by',
        'lease_until',
        'body',
      )) as (string | null)[]
      if (body === null || body === undefined) continue
      if (claimedBy !== null && Number(leaseUntil) >= now) continue
      entries.push(JSON.parse(body) as OneOffEntry)
      if (entries.length >= limit) break
    }
  }
  return entries
}

async function claimOneOff(
  ops: RedisOps,
  runKey: string,
  lease: LeaseRequest,
): Promise<ClaimedOneOff | null> {
  checkLease(lease.owner, lease.leaseUntil)
  const token = randomUUID()
  const body = (await ops.run(
    'claim-one-off',
    [ops.key('once:', runKey)],
    [lease.owner, lease.leaseUntil, lease.now, token],
  )) as string | null
  return body === null ? null : { entry: JSON.parse(body) as OneOffEntry, claim_token: token }
}

async function completeOneOff(ops: RedisOps, runKey: string, claimToken: string): Promise<boolean> {
  const done = await ops.run(
    'complete-one-off',
    [ops.key('once:', runKey), ops.key('once-due')],
    [runKey, claimToken],
  )
  return Number(done) === 1
}

/** One-off schedules on Redis. */
export function redisOneOffs(ops: RedisOps): OneOffScheduleStore {
  return {
    supportsOneOff: true,
    upsert: (entry) => upsertOneOff(ops, entry),
    debounce: (entry) => debounceOneOff(ops, entry),
    cancel: (runKey) => cancelOneOff(ops, runKey),
    list: (before) => listOneOff(ops, before),
    count: () => countOneOff(ops),
    fetchWindow: (until, now, limit) => fetchOneOffWindow(ops, until, now, limit),
    claim: (runKey, lease) => claimOneOff(ops, runKey, lease),
    complete: (runKey, token) => completeOneOff(ops, runKey, token),
  }
}
