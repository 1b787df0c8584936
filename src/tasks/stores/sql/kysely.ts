/**
 * Kysely, loaded when the first SQL store opens rather than when `fastify-switchyard/tasks` is
 * imported: Kysely is a few hundred modules, more than the rest of the task package's import,
 * and an application on the memory or Redis store never needs it.
 *
 * Every query of the SQL store is built after its backend opened (each port awaits the open
 * backend first), and opening awaits {@link loadKysely}; so the modules of the store import
 * `sql` from here, a live binding filled in by that load, and use it as Kysely's own tag.
 */
import type * as KyselyModule from 'kysely'

/** Thrown by any use of Kysely before a SQL store opened (a bug in the store, not user input). */
function notLoaded(): never {
  throw new Error('Kysely is not loaded yet: a SQL store builds queries only once it is open')
}

/** Kysely's `sql` template tag (with `sql.ref`, `sql.lit`, …) once {@link loadKysely} ran. */
export let sql: typeof KyselyModule.sql = new Proxy(notLoaded, {
  get: notLoaded,
  apply: notLoaded,
}) as unknown as typeof KyselyModule.sql

let loaded: typeof KyselyModule | undefined
let loading: Promise<typeof KyselyModule> | undefined

/** Loads Kysely once (every SQL store's open awaits this) and returns the module. */
export function loadKysely(): Promise<typeof KyselyModule> {
  loading ??= import('kysely').then((module) => {
    loaded = module
    sql = module.sql
    return module
  })
  return loading
}

/** The loaded Kysely module, for code that runs only on an open store. */
export function kysely(): typeof KyselyModule {
  return loaded ?? notLoaded()
}
