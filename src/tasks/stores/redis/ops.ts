/** What the Redis store's modules use: the store's key names, scripts and plain commands. */
import type { ScriptName } from './scripts.js'

/** Key names, Lua scripts and plain commands on the store's connection. */
export interface RedisOps {
  /** The key prefix (scripts that derive key names take it as `ARGV[1]`). */
  readonly prefix: string
  /** `<prefix><parts…>`. */
  key(...parts: string[]): string
  /** Runs a Lua script of the store (EVALSHA, then EVAL once if Redis lost it). */
  run(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown>
  /** Sends one command. */
  call(command: string, ...args: (string | number)[]): Promise<unknown>
}
