/**
 * Loads `prom-client`, an optional peer dependency: only an app that turns metrics on needs it
 * installed, and only then is it imported.
 */
import type * as PromClient from 'prom-client'
import { ConfigError } from '../core/errors.js'

/** The `prom-client` module. */
export type PromClientModule = typeof PromClient

/** Imports `prom-client` (replaceable, so a missing package can be simulated). */
export type PromClientLoader = () => Promise<unknown>

const importPromClient: PromClientLoader = () => import('prom-client')

/**
 * Imports `prom-client` through `load`; a failed import becomes a `ConfigError` that says how to
 * install it.
 */
export async function loadPromClient(
  load: PromClientLoader = importPromClient,
): Promise<PromClientModule> {
  let loaded: unknown
  try {
    loaded = await load()
  } catch (error) {
    throw new ConfigError(
      `metrics need the prom-client package: npm install prom-client (${error instanceof Error ? error.message : String(error)})`,
    )
  }
  // A CommonJS module imported from ESM may carry its exports under `default`.
  const module = (
    typeof (loaded as { Registry?: unknown }).Registry === 'function'
      ? loaded
      : (loaded as { default?: unknown }).default
  ) as PromClientModule | undefined
  if (typeof module?.Registry !== 'function')
    throw new ConfigError('metrics need the prom-client package: npm install prom-client')
  return module
}
