/**
 * Where `ctl` finds its server and credentials.
 *
 * Server URL, highest priority first: the environment variable `CTL_SERVER_URL`; a
 * `CTL_SERVER_URL=...` line in a `.ctl` project file searched upward from the current
 * directory; `server_url` in the config file; the default `http://localhost:8000/switchyard`.
 *
 * The config file (`~/.ctl/config.json`; `%USERPROFILE%\AppData\Local\ctl\config.json` on
 * Windows) holds `server_url`, `token`, `username` and `expires_at`. It holds a credential, so
 * it is written with mode 0600 (and its directory 0700), atomically by write-then-rename.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, parse as parsePath, resolve, win32 } from 'node:path'
import { UsageError } from './errors.js'

/** The default server URL. */
export const DEFAULT_SERVER_URL = 'http://localhost:8000/switchyard'

/** The content of the config file. */
export interface CtlConfig {
  server_url?: string
  token?: string
  username?: string
  expires_at?: string
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
  const config: CtlConfig = {}
  for (const key of ['server_url', 'token', 'username', 'expires_at'] as const) {
    const value = (parsed as Record<string, unknown>)[key]
    if (typeof value === 'string') config[key] = value
  }
  return config
}

/** Writes the config file with mode 0600; returns its path. */
export function writeConfig(environment: CtlEnvironment, config: CtlConfig): string {
  const path = configPath(environment)
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
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

/** Validates a server URL given on the command line (http or https, no query). */
export function checkServerUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(
      `Invalid server URL ${JSON.stringify(url)}: expected e.g. http://localhost:8000/switchyard.`,
    )
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`Invalid server URL ${JSON.stringify(url)}: use http:// or https://.`)
  }
  return url.replace(/\/+$/, '')
}
