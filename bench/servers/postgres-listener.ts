/**
 * The receiving instance of the PostgreSQL propagation bench: a PostgreSQL store on the table
 * prefix `CTL_POSTGRES_TABLE_PREFIX`, printing `READY` once connected and, for every route
 * change another instance makes, `SEEN <route> <process.hrtime.bigint()>` (one monotonic clock
 * for every process of the machine), and for every flag change it receives as that one flag,
 * `SEEN flag:<key>:<name> <time>`. Environment: CTL_POSTGRES_URL, CTL_POSTGRES_TABLE_PREFIX.
 */
import { flagStoreFor } from '../../src/flags/stores/index.js'
import { createStore } from '../../src/index.js'

const store = createStore('postgres')
await store.connect()
store.changes.subscribe((event) => {
  if (event.type === 'route_state')
    process.stdout.write(`SEEN ${event.route} ${process.hrtime.bigint()}\n`)
})
const flags = flagStoreFor(store)
await flags.connect()
flags.subscribe((event) => {
  if (event.type === 'flag' && event.flag !== null)
    process.stdout.write(`SEEN flag:${event.key}:${event.flag.name} ${process.hrtime.bigint()}\n`)
})
process.stdout.write('READY\n')
process.on('SIGTERM', () => {
  void flags
    .close()
    .then(() => store.close())
    .then(() => process.exit(0))
})
