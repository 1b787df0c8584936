/**
 * switchyard's OFREP endpoint on the admin app (memory store, credentials configured), called
 * with an evaluation key: authentication (hash + store lookup), the per-caller rate limit
 * (raised so that it counts but never refuses), body checks and the evaluation.
 */
import { ofrepApp } from './ofrep-app.js'
import { CHECKOUT, OFREP_KEY_VARIABLE } from './ofrep-flags.js'
import { listen } from './routes.js'

const key = process.env[OFREP_KEY_VARIABLE]
if (key === undefined) throw new Error(`${OFREP_KEY_VARIABLE} is not set`)
await listen(await ofrepApp([CHECKOUT], key, '1000000/second'))
