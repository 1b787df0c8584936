/**
 * Flags for every service and language: the OFREP endpoints, the evaluation keys that open
 * them, and the `flag_track` events of the admin stream (OpenFeature's `client.track()`), all
 * registered on the admin app by one call. See docs/ofrep.md.
 */
import type { EventHub } from '../../common/sse-hub.js'
import { flagServiceOf, type AdminContext, type AdminInstance } from '../context.js'
import { evaluationKeyRoutes } from '../routes/evaluation-keys.js'
import { OfrepEvaluator } from './evaluate.js'
import { OfrepLimiter } from './http.js'
import { ofrepRoutes } from './routes.js'
import { OfrepStreams } from './streams.js'

export {
  DEFAULT_OFREP_RATE_LIMIT,
  resolveOfrepOptions,
  type OfrepOptions,
  type ResolvedOfrepOptions,
} from './options.js'

/** Registers the evaluation-key endpoints, the OFREP endpoints and the `flag_track` events. */
export function ofrepApi(app: AdminInstance, context: AdminContext, hub: EventHub): void {
  const { evaluationKeys: keys, ofrep: options } = context
  const service = flagServiceOf(context)
  if (service === undefined) {
    evaluationKeyRoutes(app, context, keys)
    return
  }
  const evaluator = new OfrepEvaluator(service, options.detailedMetadata)
  const limiter = new OfrepLimiter(options.rateLimit, context.engine.clock)
  const streams = new OfrepStreams(
    options.maxStreams,
    context.engine.clock,
    (scope) => evaluator.fingerprint(scope),
    keys,
    options.maxStreamsPerKey,
  )
  const stopChanges = service.onChange(() => {
    streams.changed()
  })
  const stopTracking = hub.whileConnected(() =>
    service.tracking.subscribe((batch) => {
      for (const event of batch) hub.publish({ type: 'flag_track', data: event })
    }),
  )
  const stopRevocations = keys.onRevoke((id) => {
    streams.closeKey(id)
  })
  evaluationKeyRoutes(app, context, keys)
  ofrepRoutes(app, { context, options, service, evaluator, limiter, streams, keys })
  app.addHook('preClose', async () => {
    stopChanges()
    stopTracking()
    stopRevocations()
    evaluator.close()
    streams.close()
    await limiter.close()
  })
}
