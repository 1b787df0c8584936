/**
 * Lua scripts on Redis: each script is a `.lua` file next to the module that runs it (the build
 * copies them to `dist/`), read on first use, and run by SHA.
 *
 * Why EVALSHA with a fallback: sending only the SHA keeps every call small; Redis answers
 * `NOSCRIPT` when its script cache lost the script (a restart, `SCRIPT FLUSH`, a failover), and
 * the call is then sent once more with the script's text, which also caches it again.
 *
 * Why the file is read on first use and not at import: an application that never uses Redis
 * imports these modules too, and must not pay for (or fail on) reading files it never needs.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

/** The two commands a script runs with (an ioredis client has both). */
export interface ScriptClient {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>
}

/** A client that only has the generic `call(command, ...args)` (ioredis has it too). */
export interface CommandCaller {
  call(command: string, ...args: (string | number)[]): Promise<unknown>
}

/** A {@link ScriptClient} over a client's generic `call`. */
export function scriptClientOf(caller: CommandCaller): ScriptClient {
  return {
    evalsha: (sha, numKeys, ...rest) => caller.call('EVALSHA', sha, numKeys, ...rest),
    eval: (script, numKeys, ...rest) => caller.call('EVAL', script, numKeys, ...rest),
  }
}

/** A script's text and its SHA-1, as Redis names it. */
export interface LoadedScript {
  readonly text: string
  readonly sha: string
}

/** Builds the error for a script file that cannot be read (each half raises its own). */
export type MissingScriptError = (path: string, cause: unknown) => Error

/** One Lua script file. */
export class LuaScript {
  private loading: Promise<LoadedScript> | null = null
  private ready: LoadedScript | null = null

  /** `url`: the file, usually `new URL('./name.lua', import.meta.url)`. */
  constructor(
    readonly url: URL,
    private readonly missing: MissingScriptError,
  ) {}

  /** The script once {@link load} has resolved, else null (a hot path avoids a promise). */
  get loaded(): LoadedScript | null {
    return this.ready
  }

  /** Reads the file once; later calls share the read. A failed read may be tried again. */
  load(): Promise<LoadedScript> {
    this.loading ??= readFile(this.url, 'utf8').then(
      (text) => (this.ready = { text, sha: createHash('sha1').update(text).digest('hex') }),
      (error: unknown) => {
        this.loading = null
        throw this.missing(this.url.pathname, error)
      },
    )
    return this.loading
  }

  /** Runs the script on `client` (EVALSHA, then EVAL after `NOSCRIPT`); resolves its reply. */
  async run(
    client: ScriptClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const script = this.ready ?? (await this.load())
    return runLoaded(client, script, keys, args)
  }
}

/** Runs a loaded script: EVALSHA, then EVAL when the server's script cache lost it. */
export async function runLoaded(
  client: ScriptClient,
  script: LoadedScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args)
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error
    return client.eval(script.text, keys.length, ...keys, ...args)
  }
}

/** Several scripts of one module, by name: `<directory>/<name>.lua`. */
export class LuaScripts<Name extends string> {
  private readonly scripts = new Map<Name, LuaScript>()

  /** `directory`: a URL ending in `/`, e.g. `new URL('./lua/', import.meta.url)`. */
  constructor(directory: URL, names: readonly Name[], missing: MissingScriptError) {
    for (const name of names)
      this.scripts.set(name, new LuaScript(new URL(`${name}.lua`, directory), missing))
  }

  /** Reads every script (connect time: a missing file is reported before any command). */
  async load(): Promise<void> {
    await Promise.all([...this.scripts.values()].map((script) => script.load()))
  }

  /** Runs the script `name` on `client` with `keys` and `args`; resolves its reply. */
  run(
    name: Name,
    client: ScriptClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const script = this.scripts.get(name)
    if (script === undefined) return Promise.reject(new Error(`Unknown Lua script ${name}.`))
    return script.run(client, keys, args)
  }
}
