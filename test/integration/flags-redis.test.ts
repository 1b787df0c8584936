/**
 * Flags on Redis across instances: persistence across a restart, propagation to an engine in
 * another process (latency measured and printed, not asserted), recovery after a dropped
 * pub/sub connection, and scheduled changes applied once by three engines sharing Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { subscriberName } from '../../src/flags/stores/redis.js'
import { redisStore } from '../../src/stores/redis.js'
import { FakeClock } from '../helpers/clock.js'
import { freePort, PrivateRedis } from '../stores/fixtures/redis-server.js'
import { booleanFlag } from '../flags/helpers.js'
import { until } from '../helpers/wait.js'
import { deleteKeys, redisTestsEnabled, TEST_REDIS_URL, testPrefix } from '../helpers/redis.js'
import { pushMessage } from '../helpers/logger.js'

const enabled = await redisTestsEnabled('test/integration/flags-redis.test.ts')
const filePrefix = testPrefix('flags-engine')
let counter = 0
const engines: Engine[] = []
const children: ChildProcess[] = []
const servers: PrivateRedis[] = []
const quiet = { warn: () => undefined, error: () => undefined }

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null) continue
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  await Promise.all(servers.splice(0).map((server) => server.stop()))
})
afterAll(async () => {
  if (enabled) await deleteKeys(filePrefix)
})

const nextPrefix = () => `${filePrefix}${++counter}:`

async function engineOn(prefix: string, clock?: FakeClock): Promise<Engine> {
  const engine = createEngine({
    store: redisStore({ url: TEST_REDIS_URL, prefix, onFault: () => undefined }),
    logger: quiet,
    ...(clock === undefined ? {} : { clock }),
  })
  engines.push(engine)
  await engine.start()
  return engine
}

const moduleUrl = (path: string) =>
  pathToFileURL(fileURLToPath(new URL(path, import.meta.url))).href

/** An engine in another process that prints `VALUE <bool> <ms>` whenever flag `live` changes. */
const CHILD = `
import { createEngine } from '${moduleUrl('../../src/create-engine.ts')}'
import { redisStore } from '${moduleUrl('../../src/stores/redis.ts')}'
const now = () => performance.timeOrigin + performance.now()
const engine = createEngine({
  store: redisStore({ url: process.env.URL, prefix: process.env.PREFIX, onFault: () => {} }),
  logger: { warn() {}, error(fields, message) { process.stderr.write((message ?? fields) + '\\n') } },
})
await engine.start()
engine.flags.onChange((event) => {
  if (event.key !== 'live') return
  const value = engine.flags.sync.getBooleanValue('live', false, { targeting_key: 'u1' })
  process.stdout.write('VALUE ' + value + ' ' + now() + '\\n')
})
process.stdin.on('data', (chunk) => {
  if (!chunk.toString().includes('enable')) return
  process.stdout.write('WRITING ' + now() + '\\n')
  void engine.flags.enableFlag('live')
})
process.on('SIGTERM', () => void engine.close().then(() => process.exit(0)))
process.stdout.write('READY\\n')
`

/** Starts the child; `lines` collects its stdout lines. */
async function startChild(prefix: string): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '--eval', CHILD],
    {
      env: { ...process.env, URL: TEST_REDIS_URL, PREFIX: prefix },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  children.push(child)
  const lines: string[] = []
  let stderr = ''
  let partial = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n')
    partial = parts.pop() ?? ''
    lines.push(...parts)
  })
  await until(() => {
    if (child.exitCode !== null) throw new Error(`child exited: ${stderr}`)
    return lines.includes('READY')
  }, 20_000)
  return { child, lines }
}

const wallNow = () => performance.timeOrigin + performance.now()

describe.skipIf(!enabled)('flags on Redis', () => {
  it('survive a restart: a fresh engine on the same prefix has them', async () => {
    const prefix = nextPrefix()
    const first = await engineOn(prefix)
    await first.saveSegment({ key: 'staff', name: 'Staff', included: ['emp-1'] })
    await first.saveFlag(
      booleanFlag('gated', {
        fallthrough: 'off',
        rules: [
          {
            clauses: [{ attribute: 'key', operator: 'in_segment', values: ['staff'] }],
            variation: 'on',
          },
        ],
      }),
    )
    const saved = await first.getFlag('gated')
    await first.close()
    engines.splice(engines.indexOf(first), 1)

    const second = await engineOn(prefix)
    expect(await second.getFlag('gated')).toEqual(saved)
    expect(second.flags.sync.getBooleanValue('gated', false, { targeting_key: 'emp-1' })).toBe(true)
    expect(second.flags.sync.getBooleanValue('gated', true, { targeting_key: 'x' })).toBe(false)
  })

  it('changes evaluations in another process quickly (latency printed)', async () => {
    const prefix = nextPrefix()
    const local = await engineOn(prefix)
    const { child, lines } = await startChild(prefix)
    const valueLine = (value: boolean, from: number) =>
      lines.slice(from).find((line) => line.startsWith(`VALUE ${String(value)} `))

    let from = lines.length
    const savedAt = wallNow()
    await local.saveFlag(booleanFlag('live'))
    await until(() => valueLine(true, from) !== undefined, 5000)
    const createMs = Number(valueLine(true, from)?.split(' ')[2]) - savedAt

    from = lines.length
    const disabledAt = wallNow()
    await local.flags.disableFlag('live')
    await until(() => valueLine(false, from) !== undefined, 5000)
    const disableMs = Number(valueLine(false, from)?.split(' ')[2]) - disabledAt

    // The other direction: the child writes, this engine's evaluation changes.
    let seenAt = 0
    local.flags.onChange(() => {
      if (local.flags.sync.getBooleanValue('live', false, { targeting_key: 'u1' }))
        seenAt = wallNow()
    })
    from = lines.length
    child.stdin?.write('enable\n')
    await until(() => seenAt > 0, 5000)
    const writing = lines.slice(from).find((line) => line.startsWith('WRITING '))
    const enableMs = seenAt - Number(writing?.split(' ')[1])

    console.log(
      `flag propagation across processes (Redis): create ${createMs.toFixed(1)} ms, disable ${disableMs.toFixed(1)} ms, enable (other direction, incl. the write) ${enableMs.toFixed(1)} ms`,
    )
    expect(local.flags.sync.getBooleanValue('live', false, { targeting_key: 'u1' })).toBe(true)
    // The other process's audit entry follows its flag change; wait for it, do not race it.
    await expect
      .poll(async () => (await local.getAuditLog()).items.map((entry) => entry.action))
      .toEqual(['flag_enabled', 'flag_disabled', 'flag_created'])
  })

  it('reloads after its flag pub/sub connection dropped', async () => {
    const prefix = nextPrefix()
    const a = await engineOn(prefix)
    const b = await engineOn(prefix)
    await b.saveFlag(booleanFlag('before'))
    await until(() => a.flags.snapshot.flags.has('before'))
    const raw = new Redis(TEST_REDIS_URL)
    const clients = (await raw.client('LIST')) as string
    for (const line of clients.split('\n')) {
      if (!line.includes(` name=${subscriberName(prefix)} `)) continue
      const id = /\bid=(\d+)/.exec(line)?.[1]
      if (id !== undefined) await raw.client('KILL', 'ID', id)
    }
    raw.disconnect()
    // Written while the subscribers may be away: the resync must still bring it.
    await b.saveFlag(booleanFlag('during', { enabled: false }))
    await until(() => a.flags.snapshot.flags.has('during'), 5000)
    expect(a.flags.sync.getBooleanValue('during', true, { targeting_key: 'u' })).toBe(false)
  })

  it('applies each scheduled change once with three engines sharing Redis', async () => {
    const prefix = nextPrefix()
    const clock = new FakeClock()
    const trio = [
      await engineOn(prefix, clock),
      await engineOn(prefix, clock),
      await engineOn(prefix, clock),
    ]
    const [first] = trio
    if (first === undefined) throw new Error('no engine')
    await first.saveFlag(
      booleanFlag('sched', {
        scheduled_changes: [
          { at: clock.iso(60_000), action: 'disable' },
          {
            at: clock.iso(120_000),
            action: 'update',
            patch: { fallthrough: 'off', enabled: true },
          },
        ],
      }),
    )
    await until(() => trio.every((engine) => engine.flags.snapshot.flags.has('sched')))
    const schedulerEntries = async () => {
      await Promise.all(trio.map((engine) => engine.audit.flush()))
      return (await first.getAuditLog()).items
        .filter((entry) => entry.platform === 'scheduler')
        .map((entry) => entry.action)
    }
    const variation = (engine: Engine) => engine.flags.evaluate('sched', { key: 'u' }).variation
    const reason = (engine: Engine) => engine.flags.evaluate('sched', { key: 'u' }).reason

    clock.advance(60_000)
    const applied = await Promise.all(trio.map((engine) => engine.runDue()))
    expect(applied.reduce((sum, n) => sum + n, 0)).toBe(1)
    await until(() => trio.every((engine) => reason(engine) === 'OFF'))
    expect(await schedulerEntries()).toEqual(['flag_disabled'])

    clock.advance(60_000)
    const second = await Promise.all(trio.map((engine) => engine.runDue()))
    expect(second.reduce((sum, n) => sum + n, 0)).toBe(1)
    await until(() =>
      trio.every((engine) => reason(engine) === 'FALLTHROUGH' && variation(engine) === 'off'),
    )
    expect(await schedulerEntries()).toEqual(['flag_updated', 'flag_disabled'])
    const stored = await first.getFlag('sched')
    expect(stored?.scheduled_changes).toEqual([])
    expect(stored?.fallthrough).toBe('off')
  })

  it('fails open while Redis is away at startup, then loads the flags when it comes', async () => {
    const redis = new PrivateRedis(await freePort())
    servers.push(redis)
    const errors: string[] = []
    const engine = createEngine({
      store: redisStore({ url: redis.url, prefix: 'flags-down:', onFault: () => undefined }),
      logger: { warn: () => undefined, error: pushMessage(errors) },
      retryInterval: 0.02,
      maxRetryInterval: 0.1,
    })
    engines.push(engine)
    await engine.start() // resolves: fail-open
    expect(engine.flags.sync.getBooleanValue('seeded', false, { targeting_key: 'u' })).toBe(false)
    await expect(engine.saveFlag(booleanFlag('early'))).rejects.toThrow(/not connected/)
    expect(await engine.listFlags()).toEqual([])

    await redis.start()
    const seeding = createEngine({
      store: redisStore({ url: redis.url, prefix: 'flags-down:', onFault: () => undefined }),
      logger: quiet,
    })
    engines.push(seeding)
    await seeding.start()
    await seeding.saveFlag(booleanFlag('seeded'))
    await until(() => engine.flags.snapshot.flags.has('seeded'), 5000)
    expect(engine.flags.sync.getBooleanValue('seeded', false, { targeting_key: 'u' })).toBe(true)
    expect(errors.some((message) => message.includes('unavailable at startup'))).toBe(true)
  })
})
