/**
 * The readiness checks of a route-control engine: its replica is loaded, and its store's
 * backend answers.
 */
import { access } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { Engine } from '../core/engine.js'
import type { StoreBackend } from '../stores/types.js'
import { Readiness, safeDetail, type HealthCheck } from '../common/health-checks.js'

/**
 * `replica`: the engine has loaded its state from the store and is not retrying a reload
 * (until then it decides on the last known or declared states).
 */
export function replicaCheck(engine: Engine): HealthCheck {
  return {
    name: 'replica',
    critical: () => true,
    run: () =>
      engine.storeAvailable()
        ? { status: 'ok' }
        : { status: 'failing', detail: 'state not loaded from the store; retrying' },
  }
}

/** `backend`: one round trip to the engine's store (a Redis PING, a PostgreSQL `SELECT 1`, the state file's folder). */
export function backendCheck(engine: Engine): HealthCheck {
  return {
    name: 'backend',
    critical: () => true,
    run: async () => {
      try {
        await pingBackend(engine.storeBackend())
        return { status: 'ok' }
      } catch (error) {
        return { status: 'failing', detail: safeDetail(error) }
      }
    },
  }
}

async function pingBackend(backend: StoreBackend): Promise<void> {
  switch (backend.kind) {
    case 'memory':
      return
    case 'file':
      await access(dirname(backend.path))
      return
    case 'redis':
      await backend.redis.client().ping()
      return
    case 'postgres':
      await backend.postgres.query('SELECT 1')
      return
  }
}

/** The readiness checks of an engine: its replica is loaded and its store answers. */
export function engineReadiness(engine: Engine): Readiness {
  const readiness = new Readiness()
  readiness.add(replicaCheck(engine))
  readiness.add(backendCheck(engine))
  return readiness
}
