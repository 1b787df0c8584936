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
} from '../ports.js'
import {
  checkLease,
  checkListQuery,
  checkPendingBatch,
  claimWanted,
  parseTask,
  taskColumns,
} from '../rows.js'
import * as adminData from './admin-data.js'
import * as oneOff from './one-off.js'
import type { RedisOps } from './ops.js'
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
  /** The store's keys, scripts and commands, for the modules it delegates to. */
  readonly #ops: RedisOps = {
    key: (...parts) => this.#key(...parts),
    run: (name, keys, args) => this.#run(name, keys, args),
    call: (command, ...args) => this.#call(command, ...args),
  }

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

  // ---- one-off schedules (one-off.ts) ---------------------------------------------------

  upsertOneOff(entry: OneOffEntry): Promise<void> {
    return oneOff.upsertOneOff(this.#ops, entry)
  }

  cancelOneOff(runKey: string): Promise<boolean> {
    return oneOff.cancelOneOff(this.#ops, runKey)
  }

  listOneOff(before?: number): Promise<OneOffEntry[]> {
    return oneOff.listOneOff(this.#ops, before)
  }

  countOneOff(): Promise<number> {
    return oneOff.countOneOff(this.#ops)
  }

  fetchOneOffWindow(until: number, now: number, limit: number): Promise<OneOffEntry[]> {
    return oneOff.fetchOneOffWindow(this.#ops, until, now, limit)
  }

  claimOneOff(runKey: string, lease: LeaseRequest): Promise<ClaimedOneOff | null> {
    return oneOff.claimOneOff(this.#ops, runKey, lease)
  }

  completeOneOff(runKey: string, claimToken: string): Promise<boolean> {
    return oneOff.completeOneOff(this.#ops, runKey, claimToken)
  }

  // ---- queue configs, audit, revocations (admin-data.ts) --------------------------------

  getQueueConfigs(): Promise<StoredQueueConfig[]> {
    return adminData.getQueueConfigs(this.#ops)
  }

  putQueueConfig(config: StoredQueueConfig): Promise<void> {
    return adminData.putQueueConfig(this.#ops, config)
  }

  appendAudit(entry: Omit<TaskAuditEntry, 'id'>): Promise<TaskAuditEntry> {
    return adminData.appendAudit(this.#ops, entry)
  }

  listAudit(page: number, perPage: number): Promise<AuditPage> {
    return adminData.listAudit(this.#ops, page, perPage)
  }

  revokeSession(tokenId: string, expiresAt: number): Promise<void> {
    return adminData.revokeSession(this.#ops, tokenId, expiresAt)
  }

  isSessionRevoked(tokenId: string, now: number): Promise<boolean> {
    return adminData.isSessionRevoked(this.#ops, tokenId, now)
  }

  async close(): Promise<void> {
    const opening = this.#opening
    if (opening !== null) await opening.catch(() => undefined)
    const client = this.#client
    this.#client = null
    if (client !== null && !('client' in this.connection)) await client.quit()
  }
}
