/**
 * A TCP relay on 127.0.0.1 in front of a real server (Redis), which tests stop and start again
 * to make that server unreachable and reachable: every connection through it is cut at once,
 * new ones are refused while it is stopped, and it comes back on the same port.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'

/** A stoppable relay to `target` (`host:port` of a URL such as `redis://127.0.0.1:6379`). */
export class TcpProxy {
  /** The relay's port (0 until the first start). */
  port = 0
  private server: Server | null = null
  private readonly sockets = new Set<Socket>()
  private readonly host: string
  private readonly targetPort: number

  constructor(targetUrl: string) {
    const url = new URL(targetUrl)
    this.host = url.hostname
    this.targetPort = url.port === '' ? 6379 : Number(url.port)
  }

  /** The URL of the relay with the target's scheme. */
  url(scheme = 'redis'): string {
    return `${scheme}://127.0.0.1:${this.port}`
  }

  /** Starts relaying on the port of the previous start, or on a fresh one the first time. */
  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect({ host: this.host, port: this.targetPort })
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as { port: number }).port
    this.server = server
  }

  /** Cuts every relayed connection and stops accepting new ones. */
  async stop(): Promise<void> {
    const server = this.server
    this.server = null
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
