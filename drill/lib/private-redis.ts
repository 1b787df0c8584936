/**
 * A private `redis-server` on a free loopback port, started and killed by a drill or a test to
 * simulate Redis going away and coming back (no persistence: it comes back empty). Never the
 * shared Redis: its own port, `--save ""`, `--appendonly no`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { serverReachable } from '../../support/servers.js'

/** A redis-server process on one port that can be stopped and started again. */
export class PrivateRedis {
  private child: ChildProcess | null = null

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    const deadline = Date.now() + 5000
    while (!(await serverReachable(this.url, 500))) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /**
   * Freezes the server (SIGSTOP): connections stay open but nothing is answered, as with a
   * stalled Redis or a partition that resets nothing.
   */
  pause(): void {
    this.child?.kill('SIGSTOP')
  }

  /** Lets a paused server run again (SIGCONT). */
  resume(): void {
    this.child?.kill('SIGCONT')
  }

  /** Kills the server (SIGKILL: connections drop as in a crash) and waits for its exit. */
  async stop(): Promise<void> {
    const child = this.child
    this.child = null
    if (child === null || child.exitCode !== null) return
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve())
      child.kill('SIGKILL')
    })
  }
}
