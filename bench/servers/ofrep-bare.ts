/**
 * Baseline of the OFREP benchmark: a bare Fastify route at the same path that parses the JSON
 * body and returns the JSON switchyard answers, without authenticating or evaluating.
 */
import Fastify from 'fastify'
import { EXPECTED_ANSWER } from './ofrep-flags.js'
import { listen } from './routes.js'

const app = Fastify({ logger: false })
app.post('/switchyard/ofrep/v1/evaluate/flags/:key', () => EXPECTED_ANSWER)
await listen(app)
