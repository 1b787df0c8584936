/**
 * The logger of a state store: the store's own `logger` option, else the engine's, which the
 * engine hands it through `Store.attachLogger` (so, in a Fastify app, a child of `app.log`).
 * Before that, and for a store used without an engine, warnings and errors go to stderr.
 */
import { LoggerSlot, stderrLogger, type LoggerLike } from '../common/logger.js'

/** The logger slot of a store created with `given` (its `logger` option, if any). */
export function storeLogger(given: LoggerLike | undefined): LoggerSlot {
  return new LoggerSlot(given, () => stderrLogger({ bindings: { module: 'switchyard' } }))
}
