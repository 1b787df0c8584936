/**
 * Configuration from the environment: `CTL_ENV` names the environment (env gating, default
 * `dev`), `CTL_BACKEND` the store (default `memory`). Explicit options always win.
 */
import { ConfigError } from './errors.js'

/** Engine settings read from the environment. */
export interface EnvironmentConfig {
  env: string
  backend: string
}

/** Reads `CTL_ENV` and `CTL_BACKEND`; an empty value is a configuration error. */
export function readEnvironment(source: NodeJS.ProcessEnv = process.env): EnvironmentConfig {
  return {
    env: nonEmpty(source.CTL_ENV, 'CTL_ENV') ?? 'dev',
    backend: nonEmpty(source.CTL_BACKEND, 'CTL_BACKEND') ?? 'memory',
  }
}

function nonEmpty(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (trimmed === '') throw new ConfigError(`${name} is set but empty.`)
  return trimmed
}
