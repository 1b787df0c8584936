/**
 * A private Sentinel setup, started and torn down by a test or a drill: one primary, one replica
 * and three sentinels, each a `redis-server` child process on a free loopback port, with their
 * files in a temporary directory. It never touches the shared setups (6380/6381,
 * 26379-26381, the cluster on 7000-7005): its own ports, its own primary name, no persistence.
 * Failing over or killing its primary disturbs nobody else, so a failover can run in the
 * default suite.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../../support/servers.js'

/** Every server listens on loopback only. */
const HOST = '127.0.0.1'

/** Children still running, killed when the process exits without a teardown. */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** Asks one server a command on a short-lived connection; null when it does not answer. */
async function ask(port: number, ...command: string[]): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 500,
  })
  client.on('error', () => undefined)
  try {
    await client.connect()
    const [name, ...args] = command
    return await client.call(name ?? 'PING', ...args)
  } catch {
    return null
  } finally {
    client.disconnect()
  }
}

/** Polls `check` every 50 ms until it holds; rejects after `timeoutMs` naming `what`. */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`private sentinel setup: timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A primary, a replica and three sentinels of its own; {@link stop} removes every trace. */
export class PrivateSentinel {
  /** The name the sentinels know the primary by. */
  readonly name = 'sy-private'
  private readonly children = new Map<number, ChildProcess>()
  private dir = ''
  private ports = { primary: 0, replica: 0, sentinels: [] as number[] }

  /** The sentinels as `host:port`, for `redisStore({ sentinels, name })`. */
  get sentinels(): string[] {
    return this.ports.sentinels.map((port) => `${HOST}:${port}`)
  }

  /**
   * Starts every server and resolves once the replica is in sync and every sentinel knows the
   * replica and the two other sentinels (a failover can then be agreed on).
   */
  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'sy-sentinel-'))
    const primary = await freePort()
    const replica = await freePort()
    const sentinels = [await freePort(), await freePort(), await freePort()]
    this.ports = { primary, replica, sentinels }
    const common = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', this.dir]
    this.spawn(primary, ['--port', String(primary), ...common])
    this.spawn(replica, [
      '--port',
      String(replica),
      ...common,
      '--replicaof',
      HOST,
      String(primary),
    ])
    await waitFor(
      'the replica to sync',
      async () => /master_link_status:up/.test(String(await ask(replica, 'INFO', 'replication'))),
      15_000,
    )
    for (const port of sentinels) {
      // A sentinel rewrites its configuration file, so each has one of its own.
      const file = join(this.dir, `sentinel-${port}.conf`)
      await writeFile(
        file,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `dir ${this.dir}`,
          `sentinel monitor ${this.name} ${HOST} ${primary} 2`,
          `sentinel down-after-milliseconds ${this.name} 1000`,
          `sentinel failover-timeout ${this.name} 5000`,
          '',
        ].join('\n'),
      )
      this.spawn(port, [file, '--sentinel'])
    }
    await waitFor(
      'every sentinel to know the replica and the other sentinels',
      async () => {
        for (const port of sentinels) {
          const replicas = await ask(port, 'SENTINEL', 'REPLICAS', this.name)
          const others = await ask(port, 'SENTINEL', 'SENTINELS', this.name)
          if (!Array.isArray(replicas) || replicas.length !== 1) return false
          if (!Array.isArray(others) || others.length !== 2) return false
        }
        return true
      },
      20_000,
    )
  }

  /** `host:port` of the server the sentinels name as the primary now; null if none answers. */
  async primary(): Promise<string | null> {
    for (const port of this.ports.sentinels) {
      const answer = await ask(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name)
      if (Array.isArray(answer) && answer.length === 2) return `${answer[0]}:${answer[1]}`
    }
    return null
  }

  /** Kills every server (SIGKILL), waits for their exits and removes the directory. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              resolve()
              return
            }
            child.once('exit', () => resolve())
            child.kill('SIGKILL')
          }),
      ),
    )
    this.children.clear()
    if (this.dir !== '') await rm(this.dir, { recursive: true, force: true })
    this.dir = ''
  }

  private spawn(port: number, args: string[]): void {
    const child = spawn('redis-server', args, { stdio: 'ignore' })
    running.add(child)
    child.once('exit', () => running.delete(child))
    this.children.set(port, child)
  }
}
