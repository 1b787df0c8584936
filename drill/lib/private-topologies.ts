/**
 * Private Redis topologies, started and torn down by a test or a drill: a Sentinel setup (one
 * primary, one replica, three sentinels) and a Redis Cluster (three primaries, three replicas),
 * each server a `redis-server` child process on free loopback ports, with its files in a
 * temporary directory. They never touch the shared setups (6380/6381, 26379-26381, the cluster
 * on 7000-7005): their own ports, their own names, no persistence. Failing over or killing
 * their primaries disturbs nobody else, so a failover can run in the default suite.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { freePort } from '../../support/servers.js'

/** Every server listens on loopback only. */
const HOST = '127.0.0.1'

const run = promisify(execFile)

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

/** How much of a server's output is kept for a failure's message. */
const OUTPUT_TAIL = 2_000

/** A server of a private topology: its process, what it is, and the end of its output. */
interface Child {
  readonly server: ChildProcess
  readonly label: string
  tail: string
}

/**
 * A server exited while its topology was starting. `portTaken` says the reason was a port
 * another process bound between {@link freePort} and the server's own bind: starting again on
 * other ports then succeeds.
 */
class ServerExited extends Error {
  readonly portTaken: boolean
  constructor(topology: string, child: Child) {
    const code = child.server.exitCode ?? child.server.signalCode
    super(
      `private ${topology} setup: ${child.label} exited (${String(code)}): ${child.tail.trim()}`,
    )
    this.portTaken = /address already in use/i.test(child.tail)
  }
}

/** Servers of one private topology: spawned as children, killed and removed by {@link stop}. */
abstract class PrivateServers {
  private readonly children: Child[] = []
  protected dir = ''

  /** What the messages call this topology ("sentinel", "cluster"). */
  protected abstract readonly topology: string

  /**
   * Starts every server; resolves once the topology can fail over. A start that lost a port to
   * another process is made once more on fresh ports.
   */
  async start(): Promise<void> {
    try {
      await this.startOnce()
    } catch (error) {
      if (!(error instanceof ServerExited) || !error.portTaken) throw error
      await this.stop()
      await this.startOnce()
    }
  }

  /** Starts every server on fresh ports; resolves once the topology can fail over. */
  protected abstract startOnce(): Promise<void>

  /** Kills every server (SIGKILL), waits for their exits and removes the directory. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        ({ server: child }) =>
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
    this.children.length = 0
    if (this.dir !== '') await rm(this.dir, { recursive: true, force: true })
    this.dir = ''
  }

  protected async makeDir(name: string): Promise<string> {
    this.dir = await mkdtemp(join(tmpdir(), `sy-${name}-`))
    return this.dir
  }

  /** Starts one `redis-server`, keeping the end of its output for a failure's message. */
  protected spawn(label: string, args: string[]): void {
    const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    const child: Child = { server, label, tail: '' }
    const keep = (chunk: Buffer) => {
      child.tail = (child.tail + chunk.toString()).slice(-OUTPUT_TAIL)
    }
    server.stdout.on('data', keep)
    server.stderr.on('data', keep)
    running.add(server)
    server.once('exit', () => running.delete(server))
    this.children.push(child)
  }

  /**
   * Polls `check` every 50 ms until it holds. Rejects with {@link ServerExited} as soon as a
   * server has exited, and after `timeoutMs` with what `check` last saw (`seen()`).
   */
  protected async waitFor(
    what: string,
    check: () => Promise<boolean>,
    timeoutMs: number,
    seen: () => string = () => '',
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const exited = this.children.find(
        ({ server }) => server.exitCode !== null || server.signalCode !== null,
      )
      if (exited !== undefined) throw new ServerExited(this.topology, exited)
      if (await check()) return
      if (Date.now() > deadline) {
        const last = seen()
        throw new Error(
          `private ${this.topology} setup: timed out after ${timeoutMs} ms waiting for ${what}` +
            (last === '' ? '' : ` (last seen: ${last})`),
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** A primary, a replica and three sentinels of its own; {@link stop} removes every trace. */
export class PrivateSentinel extends PrivateServers {
  /** The name the sentinels know the primary by. */
  readonly name = 'sy-private'
  private ports = { primary: 0, replica: 0, sentinels: [] as number[] }

  /** The sentinels as `host:port`, for `redisStore({ sentinels, name })`. */
  get sentinels(): string[] {
    return this.ports.sentinels.map((port) => `${HOST}:${port}`)
  }

  protected readonly topology = 'sentinel'

  /**
   * Starts every server and resolves once the replica is in sync and every sentinel knows the
   * replica and the two other sentinels (a failover can then be agreed on). Each port is taken
   * just before its server starts, so the connections made while waiting cannot land on it.
   */
  protected async startOnce(): Promise<void> {
    await this.makeDir('sentinel')
    const primary = await freePort()
    const common = ['--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', this.dir]
    this.ports = { primary, replica: 0, sentinels: [] }
    this.spawn('primary', ['--port', String(primary), ...common])
    const replica = await freePort()
    this.ports.replica = replica
    this.spawn('replica', [
      '--port',
      String(replica),
      ...common,
      '--replicaof',
      HOST,
      String(primary),
    ])
    let link = ''
    await this.waitFor(
      'the replica to sync',
      async () => {
        link =
          /master_link_status:(\w+)/.exec(String(await ask(replica, 'INFO', 'replication')))?.[1] ??
          'no answer'
        return link === 'up'
      },
      15_000,
      () => `link ${link}`,
    )
    const sentinels = this.ports.sentinels
    for (let i = 0; i < 3; i++) {
      const port = await freePort()
      sentinels.push(port)
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
      this.spawn(`sentinel ${port}`, [file, '--sentinel'])
    }
    // What each sentinel last reported, as "port: replicas/sentinels".
    const known = new Map<number, string>()
    await this.waitFor(
      'every sentinel to know the replica and the other sentinels',
      async () => {
        let complete = true
        for (const port of sentinels) {
          const replicas = await ask(port, 'SENTINEL', 'REPLICAS', this.name)
          const others = await ask(port, 'SENTINEL', 'SENTINELS', this.name)
          const count = (answer: unknown) => (Array.isArray(answer) ? answer.length : '?')
          known.set(port, `${count(replicas)}/${count(others)}`)
          if (count(replicas) !== 1 || count(others) !== 2) complete = false
        }
        return complete
      },
      // Discovery takes about 7 s here (hello messages every 2 s); a loaded machine takes longer.
      30_000,
      () =>
        `replicas/sentinels known per sentinel: ${[...known].map(([port, seen]) => `${port} ${seen}`).join(', ')}`,
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
}

/**
 * A Redis Cluster of its own: three primaries with a replica each, a node timeout of 2 s (a
 * primary that stops answering is replaced by its replica a few seconds later).
 */
export class PrivateCluster extends PrivateServers {
  private ports: number[] = []

  /** Every node as `host:port` (the first three are seeds enough for a client). */
  get nodes(): string[] {
    return this.ports.map((port) => `${HOST}:${port}`)
  }

  protected readonly topology = 'cluster'

  protected async startOnce(): Promise<void> {
    const dir = await this.makeDir('cluster')
    const ports: number[] = []
    for (let i = 0; i < 6; i++) {
      const port = await freePort()
      // The cluster bus gets a free port of its own (not port + 10000, which may be taken).
      const bus = await freePort()
      ports.push(port)
      this.spawn(`node ${port}`, [
        '--port',
        String(port),
        '--bind',
        HOST,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(bus),
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
      ])
    }
    this.ports = ports
    for (const port of ports)
      await this.waitFor(`node ${port}`, async () => (await ask(port, 'PING')) === 'PONG', 10_000)
    await run(
      'redis-cli',
      ['--cluster', 'create', ...this.nodes, '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: 30_000 },
    )
    await this.waitFor(
      'every node to see the cluster ok with its six nodes',
      async () => {
        for (const port of ports) {
          if (!/cluster_state:ok/.test(String(await ask(port, 'CLUSTER', 'INFO')))) return false
          const known = String(await ask(port, 'CLUSTER', 'NODES'))
            .split('\n')
            .filter((line) => line.trim() !== '' && !/fail|handshake|noaddr/.test(line))
          if (known.length !== 6) return false
          // Every node names a replica for every range of slots (a failover has somewhere to go).
          const ranges = await ask(port, 'CLUSTER', 'SLOTS')
          if (!Array.isArray(ranges) || ranges.length === 0) return false
          if (ranges.some((range) => !Array.isArray(range) || range.length < 4)) return false
          // A replica takes over only once it holds its primary's data.
          const replication = String(await ask(port, 'INFO', 'replication'))
          if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication))
            return false
        }
        return true
      },
      30_000,
    )
  }
}
