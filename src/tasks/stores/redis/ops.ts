/** What the Redis store's modules use: the store's key names, scripts and plain commands. */
import type { ScriptName } from './scripts.js'

/** Key names, Lua scripts and plain commands on the store's connection. */
export interface RedisOps {
  /** The key prefix (scripts that derive key names take it as `ARGV[1]`). */
  readonly prefix: string
  /** `<prefix><parts…>`. */
  key(...parts: string[]): string
  /**
   * Runs a Lua script of the store (EVALSHA, then EVAL once if Redis lost it). Once the
   * connection is open, the command is on it when this returns: calls made one after another
   * reach Redis, and run there, in that order.
   */
  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown>
  /** Whether the connection is open (so that {@link run} sends at once). */
  isOpen(): boolean
  /**
   * Whether writes sent one after another commit in that order: true on one connection (a
   * single server, or the primary Sentinel names); false on a cluster, whose client may
   * resend a redirected command after later ones.
   */
  readonly ordered: boolean
  /** Sends one command. */
  call(command: string, ...args: (string | number)[]): Promise<unknown>
}
