/**
 * The Redis task store. Records are hashes with sorted-set indexes (by creation time) per
 * status, function and queue; every multi-key change and every claim is one Lua script, so it is
 * atomic and two instances can never both win a claim. Single-key claims (idempotency keys,
 * schedule slots) are `SET NX`.
 *
 * Key names are derived inside the scripts from the prefix: the store targets one Redis server
 * (or a primary with replicas), not a Redis Cluster.
 */
import { randomUUID } from 'node:crypto'
import { TaskValidationError } from '../../errors.js'
import type { StoredTask } from '../../record.js'
import type { TaskStatus } from '../../status.js'
import { defaultExport, loadDriver } from '../drivers.js'
import { StoreError } from '../errors.js'
import type {
  AuditPage,
  ClaimedOneOff,
  ClaimedTask,
  ClaimPendingRequest,
  DurableTaskStore,
  LeaseRequest,
  OneOffEntry,
  StoredQueueConfig,
  TaskAggregate,
  TaskAuditEntry,
  TaskListQuery,
  TaskPage,
} from '../port.js'
import {
  checkLease,
  checkListQuery,
  checkOneOff,
  checkPendingBatch,
  claimWanted,
  parseTask,
  taskColumns,
} from '../rows.js'
import { loadScripts, type LuaScript, type ScriptName } from './scripts.js'

/** The commands the store needs from a Redis client (ioredis satisfies it). */
export interface RedisCommandClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>
  quit(): Promise<unknown>
}

/** Options of {@link RedisTaskStore}. */
export interface RedisStoreOptions {
  /** Prefix of every key; default `switchyard:tasks:`. */
  prefix?: string
}

type RedisConstructor = new (url: string, options: Record<string, unknown>) => RedisCommandClient

const SAVE_CHUNK = 500

/** A {@link DurableTaskStore} on Redis. */
export class RedisTaskStore implements DurableTaskStore {
  readonly kind = 'redis'
  readonly supportsOneOff = true
  readonly #prefix: string
  #client: RedisCommandClient | null = null
  #scripts: Map<ScriptName, LuaScript> | null = null
  #opening: Promise<RedisCommandClient> | null = null

  constructor(
    private readonly connection: { url: string } | { client: RedisCommandClient },
    options: RedisStoreOptions = {},
  ) {
    this.#prefix = options.prefix ?? 'switchyard:tasks:'
  }

  async init(): Promise<void> {
    await this.#open()
  }

  #open(): Promise<RedisCommandClient> {
    if (this.#client !== null) return Promise.resolve(this.#client)
    this.#opening ??= (async () => {
      this.#scripts = await loadScripts()
      let client: RedisCommandClient
      if ('client' in this.connection) client = this.connection.client
      else {
        const module = (await loadDriver('ioredis', 'Redis')) as { Redis?: RedisConstructor }
        const Redis = module.Redis ?? (defaultExport(module) as RedisConstructor)
        client = new Redis(this.connection.url, { maxRetriesPerRequest: 2 })
      }
      this.#client = client
      return client
    })().finally(() => {
      this.#opening = null
    })
    return this.#opening
  }

  #key(...parts: string[]): string {
    return this.#prefix + parts.join('')
  }

  async #run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    const client = await this.#open()
    const script = this.#scripts?.get(name)
    if (script === undefined) throw new StoreError(`Missing Lua script ${name}.`)
    try {
      return await client.call('EVALSHA', script.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error
      return client.call('EVAL', script.text, keys.length, ...keys, ...args)
    }
  }

  async #call(command: string, ...args: (string | number)[]): Promise<unknown> {
    return (await this.#open()).call(command, ...args)
  }

  // ---- records -------------------------------------------------------------------------

  saveTasks(tasks: readonly StoredTask[]): Promise<void> {
    return this.#save(tasks, '', '')
  }

  async #save(tasks: readonly StoredTask[], owner: string, lease: string): Promise<void> {
    const rows = tasks.map(taskColumns)
    for (let i = 0; i < rows.length; i += SAVE_CHUNK) {
      const args: (string | number)[] = [this.#prefix, owner, lease]
      for (const row of rows.slice(i, i + SAVE_CHUNK)) {
        args.push(
          row.task_id,
          row.status,
          row.func_name,
          row.queue,
          row.created_ms,
          row.finished_ms ?? '',
          row.duration,
          row.body,
        )
      }
      await this.#run('save-tasks', [], args)
    }
  }

  async loadTasks(): Promise<StoredTask[]> {
    const ids = (await this.#call('ZRANGE', this.#key('idx:all'), 0, -1)) as string[]
    return this.#bodies(ids)
  }

  async #bodies(ids: string[]): Promise<StoredTask[]> {
    const tasks: StoredTask[] = []
    for (const id of ids) {
      const body = (await this.#call('HGET', this.#key('task:', id), 'body')) as string | null
      if (body !== null) tasks.push(parseTask(body))
    }
    return tasks
  }

  async getTask(taskId: string): Promise<StoredTask | null> {
    const body = (await this.#call('HGET', this.#key('task:', taskId), 'body')) as string | null
    return body === null ? null : parseTask(body)
  }

  async listTasks(query: TaskListQuery): Promise<TaskPage> {
    checkListQuery(query)
    const indexes: string[] = []
    if (query.status !== undefined) indexes.push(this.#key('idx:status:', query.status))
    if (query.funcName !== undefined) indexes.push(this.#key('idx:func:', query.funcName))
    if (query.queue !== undefined) indexes.push(this.#key('idx:queue:', query.queue))
    let source = indexes[0] ?? this.#key('idx:all')
    let temporary: string | null = null
    if (indexes.length > 1) {
      temporary = this.#key('tmp:', randomUUID())
      await this.#call('ZINTERSTORE', temporary, indexes.length, ...indexes, 'AGGREGATE', 'MIN')
      source = temporary
    }
    try {
      const min = query.since === undefined ? '-inf' : query.since
      const offset = (query.page - 1) * query.perPage
      const ids = (await this.#call(
        'ZRANGE',
        source,
        '+inf',
        min,
        'BYSCORE',
        'REV',
        'LIMIT',
        offset,
        query.perPage,
      )) as string[]
      const total = Number(await this.#call('ZCOUNT', source, min, '+inf'))
      return { items: await this.#bodies(ids), total, page: query.page, per_page: query.perPage }
    } finally {
      if (temporary !== null) await this.#call('DEL', temporary)
    }
  }

  async aggregateTasks(): Promise<TaskAggregate[]> {
    const counts = (await this.#call('HGETALL', this.#key('agg:count'))) as string[]
    const durations = (await this.#call('HGETALL', this.#key('agg:duration'))) as string[]
    const duration = new Map<string, number>()
    for (let i = 0; i < durations.length; i += 2) {
      duration.set(durations[i] as string, Number(durations[i + 1]))
    }
    const groups: TaskAggregate[] = []
    for (let i = 0; i < counts.length; i += 2) {
      const field = counts[i] as string
      const count = Number(counts[i + 1])
      if (count <= 0) continue
      const [funcName = '', status = ''] = field.split('\n')
      groups.push({
        func_name: funcName,
        status: status as TaskStatus,
        count,
        total_duration: Math.round((duration.get(field) ?? 0) * 1e6) / 1e6,
      })
    }
    return groups
  }

  async deleteTerminalBefore(cutoff: number): Promise<number> {
    if (!Number.isFinite(cutoff)) throw new TaskValidationError('cutoff must be epoch ms.')
    let total = 0
    for (;;) {
      const n = Number(await this.#run('delete-terminal', [], [this.#prefix, cutoff, 1000]))
      total += n
      if (n < 1000) return total
    }
  }

  // ---- the pending queue ---------------------------------------------------------------

  async enqueuePending(
    tasks: readonly StoredTask[],
    lease: Omit<LeaseRequest, 'now'>,
  ): Promise<void> {
    checkPendingBatch(tasks, lease)
    await this.#save(tasks, lease.owner, String(lease.leaseUntil))
  }

  claimPending(request: ClaimPendingRequest): Promise<ClaimedTask[]> {
    if (request.funcNames.length === 0) return Promise.resolve([])
    return this.#claim('pending', request, request.funcNames)
  }

  claimOrphans(request: LeaseRequest & { limit: number }): Promise<ClaimedTask[]> {
    return this.#claim('running', request, null)
  }

  async #claim(
    status: TaskStatus,
    request: LeaseRequest & { limit: number },
    funcNames: readonly string[] | null,
  ): Promise<ClaimedTask[]> {
    if (!claimWanted(request)) return []
    const bodies = (await this.#run(
      'claim-tasks',
      [],
      [
        this.#prefix,
        status,
        request.owner,
        request.leaseUntil,
        request.now,
        request.limit,
        funcNames === null ? '0' : '1',
        ...(funcNames ?? []),
      ],
    )) as string[]
    return bodies.map((body) => ({
      task: parseTask(body),
      claimed_by: request.owner,
      lease_until: request.leaseUntil,
    }))
  }

  async renewLeases(owner: string, leaseUntil: number): Promise<number> {
    checkLease(owner, leaseUntil)
    return Number(await this.#run('renew-leases', [], [this.#prefix, owner, leaseUntil]))
  }

  async releaseTasks(taskIds: readonly string[], owner: string): Promise<void> {
    if (taskIds.length === 0) return
    await this.#run('release-tasks', [], [this.#prefix, owner, ...taskIds])
  }

  // ---- idempotency -----------------------------------------------------------------------

  async claimIdempotencyKey(key: string, taskId: string): Promise<string | null> {
    const redisKey = this.#key('idem:', key)
    for (let attempt = 0; attempt < 5; attempt++) {
      if ((await this.#call('SET', redisKey, taskId, 'NX')) === 'OK') return null
      const holder = (await this.#call('GET', redisKey)) as string | null
      if (holder !== null) return holder
    }
    throw new TaskValidationError(`The idempotency key "${key}" is contended; try again.`)
  }

  async releaseIdempotencyKey(key: string, taskId: string): Promise<void> {
    await this.#run('release-key', [this.#key('idem:', key)], [taskId])
  }

  // ---- periodic schedule slots -----------------------------------------------------------

  async claimScheduleSlot(scheduleName: string, slotTime: number, owner: string): Promise<boolean> {
    if (!Number.isSafeInteger(slotTime)) {
      throw new TaskValidationError('slotTime must be epoch milliseconds (an integer).')
    }
    const member = `${slotTime}:${scheduleName}`
    const won = (await this.#call('SET', this.#key('slot:', member), owner, 'NX')) === 'OK'
    if (won) await this.#call('ZADD', this.#key('slots'), slotTime, member)
    return won
  }

  async pruneScheduleSlots(before: number): Promise<number> {
    const members = (await this.#call(
      'ZRANGE',
      this.#key('slots'),
      '-inf',
      `(${before}`,
      'BYSCORE',
    )) as string[]
    for (const member of members) {
      await this.#call('DEL', this.#key('slot:', member))
      await this.#call('ZREM', this.#key('slots'), member)
    }
    return members.length
  }

  // ---- one-off schedules -----------------------------------------------------------------

  async upsertOneOff(entry: OneOffEntry): Promise<void> {
    checkOneOff(entry)
    await this.#run(
      'upsert-one-off',
      [this.#key('once:', entry.run_key), this.#key('once-due')],
      [entry.run_key, entry.run_at, JSON.stringify(entry)],
    )
  }

  async cancelOneOff(runKey: string): Promise<boolean> {
    const deleted = Number(await this.#call('DEL', this.#key('once:', runKey)))
    await this.#call('ZREM', this.#key('once-due'), runKey)
    return deleted > 0
  }

  async listOneOff(before?: number): Promise<OneOffEntry[]> {
    const max = before === undefined ? '+inf' : `(${before}`
    const keys = (await this.#call(
      'ZRANGE',
      this.#key('once-due'),
      '-inf',
      max,
      'BYSCORE',
    )) as string[]
    const entries: OneOffEntry[] = []
    for (const runKey of keys) {
      const body = (await this.#call('HGET', this.#key('once:', runKey), 'body')) as string | null
      if (body !== null) entries.push(JSON.parse(body) as OneOffEntry)
    }
    return entries
  }

  async countOneOff(): Promise<number> {
    return Number(await this.#call('ZCARD', this.#key('once-due')))
  }

  async fetchOneOffWindow(until: number, now: number, limit: number): Promise<OneOffEntry[]> {
    const entries: OneOffEntry[] = []
    let offset = 0
    while (entries.length < limit) {
      const keys = (await this.#call(
        'ZRANGE',
        this.#key('once-due'),
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
        const [claimedBy, leaseUntil, body] = (await this.#call(
          'HMGET',
          this.#key('once:', runKey),
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

  async claimOneOff(runKey: string, lease: LeaseRequest): Promise<ClaimedOneOff | null> {
    checkLease(lease.owner, lease.leaseUntil)
    const token = randomUUID()
    const body = (await this.#run(
      'claim-one-off',
      [this.#key('once:', runKey)],
      [lease.owner, lease.leaseUntil, lease.now, token],
    )) as string | null
    return body === null ? null : { entry: JSON.parse(body) as OneOffEntry, claim_token: token }
  }

  async completeOneOff(runKey: string, claimToken: string): Promise<boolean> {
    const done = await this.#run(
      'complete-one-off',
      [this.#key('once:', runKey), this.#key('once-due')],
      [runKey, claimToken],
    )
    return Number(done) === 1
  }

  // ---- queue configs, audit, revocations -------------------------------------------------

  async getQueueConfigs(): Promise<StoredQueueConfig[]> {
    const flat = (await this.#call('HGETALL', this.#key('queues'))) as string[]
    const configs: StoredQueueConfig[] = []
    for (let i = 1; i < flat.length; i += 2) {
      configs.push(JSON.parse(flat[i] as string) as StoredQueueConfig)
    }
    return configs.sort((x, y) => x.name.localeCompare(y.name))
  }

  async putQueueConfig(config: StoredQueueConfig): Promise<void> {
    for (const value of [config.concurrency, config.max_size]) {
      if (value !== null && (!Number.isInteger(value) || value < 0)) {
        throw new TaskValidationError('concurrency and max_size must be null or integers ≥ 0.')
      }
    }
    const stored = { name: config.name, concurrency: config.concurrency, max_size: config.max_size }
    await this.#call('HSET', this.#key('queues'), config.name, JSON.stringify(stored))
  }

  async appendAudit(entry: Omit<TaskAuditEntry, 'id'>): Promise<TaskAuditEntry> {
    const id = Number(await this.#call('INCR', this.#key('audit:seq')))
    const full: TaskAuditEntry = { id, ...entry }
    await this.#call('HSET', this.#key('audit'), id, JSON.stringify(full))
    await this.#call('ZADD', this.#key('audit:idx'), id, id)
    return full
  }

  async listAudit(page: number, perPage: number): Promise<AuditPage> {
    checkListQuery({ page, perPage })
    const start = (page - 1) * perPage
    const ids = (await this.#call(
      'ZRANGE',
      this.#key('audit:idx'),
      start,
      start + perPage - 1,
      'REV',
    )) as string[]
    const items: TaskAuditEntry[] = []
    for (const id of ids) {
      const json = (await this.#call('HGET', this.#key('audit'), id)) as string | null
      if (json !== null) items.push(JSON.parse(json) as TaskAuditEntry)
    }
    const total = Number(await this.#call('ZCARD', this.#key('audit:idx')))
    return { items, total, page, per_page: perPage }
  }

  async revokeSession(tokenId: string, expiresAt: number): Promise<void> {
    // The value is the expiry, compared with the caller's clock; PXAT only collects garbage.
    await this.#call(
      'SET',
      this.#key('revoked:', tokenId),
      expiresAt,
      'PXAT',
      Math.max(expiresAt, Date.now() + 60_000),
    )
  }

  async isSessionRevoked(tokenId: string, now: number): Promise<boolean> {
    const value = (await this.#call('GET', this.#key('revoked:', tokenId))) as string | null
    return value !== null && Number(value) > now
  }

  async close(): Promise<void> {
    const opening = this.#opening
    if (opening !== null) await opening.catch(() => undefined)
    const client = this.#client
    this.#client = null
    if (client !== null && !('client' in this.connection)) await client.quit()
  }
}
