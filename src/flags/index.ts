/**
 * Feature flags and segments: models, validation, the evaluator, the flag service (operations
 * and replica), the synchronous client, the OpenFeature provider and the evaluation stream.
 *
 * @example
 * const flags = new FlagService({ store: memoryFlagStore(), report: (op) => audit(op) })
 * await flags.start()
 * await flags.saveFlag({ key: 'new-checkout', name: 'New checkout', type: 'boolean',
 *   variations: [{ name: 'on', value: true }, { name: 'off', value: false }],
 *   off_variation: 'off', fallthrough: 'on' })
 * flags.sync.getBooleanValue('new-checkout', false, { targeting_key: 'user-1' }) // true
 *
 * The OpenFeature provider lives in `./openfeature.js` and is deliberately not re-exported
 * here: `@openfeature/server-sdk` is an optional peer dependency, so it is loaded only by
 * `engine.useOpenFeature()` (a dynamic import), never by importing `fastify-switchyard`.
 */
export * from './model.js'
export * from './schemas.js'
export * from './errors.js'
export { bucketOf, pickRolloutIndex } from './bucketing.js'
export { compileFlag, compileSegment, type CompiledFlag, type CompiledSegment } from './compile.js'
export { evaluateFlag, isSegmentMember, type FlagSnapshot } from './evaluator.js'
export { toEvaluationContext, fromFlatContext, type FlatContext } from './context.js'
export { applyMergePatch } from './merge-patch.js'
export { flagChanges, versionSummary, FLAG_BOOKKEEPING_FIELDS } from './history.js'
export type {
  FlagStore,
  FlagChangeEvent,
  FlagChangeListener,
  FlagVersion,
  NewFlagVersion,
} from './ports.js'
export { memoryFlagStore } from './stores/memory.js'
export {
  FlagService,
  DEFAULT_FLAG_HISTORY_LIMIT,
  type FlagServiceOptions,
  type FlagWriteOptions,
  type AppliedScheduledChange,
  type FlagServiceStatus,
  type FlagStatusListener,
} from './service.js'
export { SyncFlagClient, type SyncContext } from './sync-client.js'
export {
  BatchedStream,
  EvaluationStream,
  TrackingStream,
  type BatchListener,
  type EvaluationEvent,
  type EvaluationListener,
  type EvaluationStreamOptions,
  type TrackingDetail,
  type TrackingEvent,
  type TrackingListener,
} from './stream.js'
