/**
 * The receiving instance of the PostgreSQL propagation bench: a PostgreSQL store on the table
 * prefix `CTL_POSTGRES_TABLE_PREFIX`, printing `READY` once connected and, for every route
 * change another instance makes, `SEEN <route> <process.hrtime.bigint()>` (one monotonic clock
 * for every process of the machine). Environment: CTL_POSTGRES_URL, CTL_POSTGRES_TABLE_PREFIX.
 */
import { createStore } from '../../src/index.js'

const store = createStore('postgres')
await store.connect()
store.changes.subscribe((event) => {
  if (event.type === 'route_state')
    process.stdout.write(`SEEN ${event.route} ${process.hrtime.bigint()}\n`)
})
process.stdout.write('READY\n')
process.on('SIGTERM', () => {
  void store.close().then(() => process.exit(0))
})
