/**
 * `fastify-switchyard/sdk`: an app of multi-service mode. `switchyardSdk` connects the app to its
 * central server (`switchyard serve`); the route decorators are those of `fastify-switchyard/fastify`,
 * re-exported here so an app imports from one place.
 */
export { switchyardSdk, type SwitchyardSdkOptions, type SdkHandle } from './plugin.js'
export type { SdkStatus } from './sync.js'
export { SdkConnectionError, SdkProtocolError, SdkReadOnlyError, SdkWriteError } from './errors.js'
export type { DeclaredRoute, RegisterAnswer, SdkSnapshot } from './wire.js'
export * from '../fastify/decorators.js'
