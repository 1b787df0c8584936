/**
 * Where `ctl` finds its server and credentials.
 *
 * Server URL, highest priority first: the environment variable `CTL_SERVER_URL`; a
 * `CTL_SERVER_URL=...` line in a `.ctl` project file searched upward from the current
 * directory; `server_url` in the config file; the default `http://127.0.0.1:8000/switchyard` —
 * where the demo and `switchyard serve --port 8000` listen, spelt as they print it, so the
 * origin a token is bound to is the same whichever way the URL was given.
 *
 * The config file (`~/.ctl/config.json`; `%USERPROFILE%\AppData\Local\ctl\config.json` on
 * Windows) holds `server_url` and the credentials of each server `ctl` logged in to, by origin
 * (`credentials: {"https://admin.example.com": {token, username, expires_at, server_url}}`); the top-level
 * `token`, `username`, `expires_at` and `token_origin` repeat the latest login. It holds
 * credentials, so it is written with mode 0600 (and its directory 0700), atomically by
 * write-then-rename.
 *
 * Why tokens are bound to the origin that issued them: the server URL can come from the
 * environment or from a `.ctl` file in whatever directory `ctl` runs in, and a token sent to
 * the wrong server is a token given away.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, parse as parsePath, resolve, win32 } from 'node:path'
import { UsageError } from './errors.js'

/** The default server URL. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:8000/switchyard'

/** A stored login: the token one server issued. */
export interface StoredCredential {
  token: string
  username?: string
  expires_at?: string
  /** The server URL logged in to (a note names it when ctl is pointed elsewhere). */
  server_url?: string
}

/** The content of the config file. */
export interface CtlConfig {
  server_url?: string
  /** The latest login (also in `credentials`), for readers of the older format. */
  token?: string
  username?: string
  expires_at?: string
  /** The origin that issued `token`. */
  token_origin?: string
  /** Logins by the origin (`scheme://host:port`) of the server that issued them. */
  credentials?: Map<string, StoredCredential>
}

/** The origin (`scheme://host:port`) of a server URL, or null when it is not a URL. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

/** The stored login for the server at `url`, if one was issued by that origin. */
export function credentialFor(config: CtlConfig, url: string): StoredCredential | undefined {
  const origin = originOf(url)
  return origin === null ? undefined : config.credentials?.get(origin)
}

/** `config` with the login for `url`'s origin replaced (or removed, with null). */
export function withCredential(
  config: CtlConfig,
  url: string,
  credential: StoredCredential | null,
): CtlConfig {
  const origin = originOf(url)
  if (origin === null) return config
  const credentials = new Map(config.credentials)
  const { token: _t, username: _u, expires_at: _e, token_origin: latest, ...rest } = config
  if (credential === null) {
    credentials.delete(origin)
    // The top-level copy goes with it when it was this server's.
    return latest === origin ? { ...rest, credentials } : { ...config, credentials }
  }
  credentials.set(origin, credential)
  // The top-level server_url is the configured server (`ctl config set-url`): not the login's.
  const { server_url: _s, ...login } = credential
  return { ...rest, ...login, token_origin: origin, credentials }
}

/** Where the resolved server URL came from. */
export type UrlSource =
  | { kind: 'env' }
  | { kind: 'project'; path: string }
  | { kind: 'config'; path: string }
  | { kind: 'default' }

/** The environment `ctl` reads (injectable for tests). */
export interface CtlEnvironment {
  env: NodeJS.ProcessEnv
  cwd: string
  platform: NodeJS.Platform
}

/** The process's own environment. */
export function processEnvironment(): CtlEnvironment {
  return { env: process.env, cwd: process.cwd(), platform: process.platform }
}

/** The config file path for this platform (honours `HOME` / `USERPROFILE`). */
export function configPath(environment: CtlEnvironment): string {
  if (environment.platform === 'win32') {
    const profile = environment.env.USERPROFILE ?? homedir()
    return win32.join(profile, 'AppData', 'Local', 'ctl', 'config.json')
  }
  return join(environment.env.HOME ?? homedir(), '.ctl', 'config.json')
}

/** Reads the config file; a missing file is an empty config, a corrupt one an error. */
export function readConfig(environment: CtlEnvironment): CtlConfig {
  const path = configPath(environment)
  if (!existsSync(path)) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    throw new Error(`The config file ${path} is not valid JSON: fix or delete it.`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`The config file ${path} must hold a JSON object: fix or delete it.`)
  }
  const record = parsed as Record<string, unknown>
  const config: CtlConfig = {}
  for (const key of ['server_url', 'token', 'username', 'expires_at', 'token_origin'] as const) {
    const value = record[key]
    if (typeof value === 'string') config[key] = value
  }
  // A Map: the origins are keys chosen by whoever wrote the file.
  const credentials = new Map<string, StoredCredential>()
  const stored = record.credentials
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
    for (const [origin, value] of Object.entries(stored)) {
      const entry = value as Record<string, unknown> | null
      if (entry === null || typeof entry !== 'object' || typeof entry.token !== 'string') continue
      credentials.set(origin, {
        token: entry.token,
        ...(typeof entry.username === 'string' ? { username: entry.username } : {}),
        ...(typeof entry.expires_at === 'string' ? { expires_at: entry.expires_at } : {}),
        ...(typeof entry.server_url === 'string' ? { server_url: entry.server_url } : {}),
      })
    }
  }
  // The older format: one token, known to be this origin's only when token_origin says so.
  if (
    config.token !== undefined &&
    config.token_origin !== undefined &&
    !credentials.has(config.token_origin)
  )
    credentials.set(config.token_origin, {
      token: config.token,
      ...(config.username === undefined ? {} : { username: config.username }),
      ...(config.expires_at === undefined ? {} : { expires_at: config.expires_at }),
    })
  config.credentials = credentials
  return config
}

/** Writes the config file with mode 0600; returns its path. */
export function writeConfig(environment: CtlEnvironment, config: CtlConfig): string {
  const path = configPath(environment)
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  const { credentials, ...rest } = config
  const document = {
    ...rest,
    ...(credentials === undefined ? {} : { credentials: Object.fromEntries(credentials) }),
  }
  writeFileSync(temporary, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, path)
  return path
}

/** Finds `CTL_SERVER_URL` in the nearest `.ctl` file at or above `cwd`. */
export function findProjectUrl(cwd: string): { url: string; path: string } | null {
  let directory = resolve(cwd)
  const root = parsePath(directory).root
  for (;;) {
    const candidate = join(directory, '.ctl')
    if (existsSync(candidate)) {
      let text: string
      try {
        text = readFileSync(candidate, 'utf8')
      } catch {
        text = ''
      }
      const url = projectFileUrl(text)
      if (url !== null) return { url, path: candidate }
    }
    if (directory === root) return null
    directory = dirname(directory)
  }
}

/** Reads the `CTL_SERVER_URL=value` line of a `.ctl` file (quotes and `export` allowed). */
export function projectFileUrl(text: string): string | null {
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?CTL_SERVER_URL\s*=\s*(.*?)\s*$/.exec(line)
    if (match === null) continue
    const value = (match[1] ?? '').replace(/^(['"])(.*)\1$/, '$2').trim()
    if (value !== '') return value
  }
  return null
}

/** The server URL and where it came from. */
export function resolveServerUrl(environment: CtlEnvironment): { url: string; source: UrlSource } {
  const fromEnv = environment.env.CTL_SERVER_URL?.trim()
  if (fromEnv) return { url: fromEnv, source: { kind: 'env' } }
  const project = findProjectUrl(environment.cwd)
  if (project !== null) return { url: project.url, source: { kind: 'project', path: project.path } }
  const config = readConfig(environment)
  if (config.server_url) {
    return { url: config.server_url, source: { kind: 'config', path: configPath(environment) } }
  }
  return { url: DEFAULT_SERVER_URL, source: { kind: 'default' } }
}

/**
 * The resolved server URL, checked before any request: one that is not an http(s) URL is bad
 * usage (exit 2), reported with the place it was read from, so the fix is obvious.
 */
export function checkedServerUrl(environment: CtlEnvironment): {
  url: string
  source: UrlSource
} {
  const resolved = resolveServerUrl(environment)
  const problem = urlProblem(resolved.url)
  if (problem !== null) {
    throw new UsageError(
      `${settingOf(resolved.source)} is not a valid URL: ${JSON.stringify(resolved.url)} (${problem}).`,
    )
  }
  return resolved
}

/** The setting a URL came from, as a user would look for it. */
function settingOf(source: UrlSource): string {
  switch (source.kind) {
    case 'env':
      return 'CTL_SERVER_URL'
    case 'project':
      return `CTL_SERVER_URL in ${source.path}`
    case 'config':
      return `server_url in ${source.path}`
    case 'default':
      return 'the default server URL'
  }
}

/** Why `url` cannot be a server URL, or null when it can. */
function urlProblem(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `expected e.g. ${DEFAULT_SERVER_URL}`
  }
  // `localhost:8000` parses, as a URL of the scheme "localhost:".
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'use http:// or https://'
  return null
}

/** The `Source:` line of `ctl config show`. */
export function describeSource(source: UrlSource): string {
  switch (source.kind) {
    case 'env':
      return 'env CTL_SERVER_URL'
    case 'project':
      return `.ctl (${source.path})`
    case 'config':
      return `config file (${source.path})`
    case 'default':
      return 'default'
  }
}

/** Validates a server URL given on the command line (http or https). */
export function checkServerUrl(url: string): string {
  const problem = urlProblem(url)
  if (problem !== null)
    throw new UsageError(`Invalid server URL ${JSON.stringify(url)}: ${problem}.`)
  return url.replace(/\/+$/, '')
}
