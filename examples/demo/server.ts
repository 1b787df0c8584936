/**
 * The demo: `npm start`. Listens on PORT (default 8000) and prints what it runs on
 * (`CTL_BACKEND`, `CTL_FILE_PATH`, `CTL_REDIS_URL`, `CTL_POSTGRES_URL`; tasks in a SQLite file) and what to try.
 */
import { buildDemoApp, demoBackend, demoInstructions } from '../../src/demo/app.js'

const port = Number(process.env.PORT ?? 8000)
const host = process.env.HOST ?? '127.0.0.1'
const app = await buildDemoApp()
const address = await app.listen({ host, port })
console.log(demoInstructions(address.replace('0.0.0.0', '127.0.0.1'), demoBackend(app)))

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0))
  })
}
