/**
 * The error catalogue of route control: every coded error class the engine, its features and
 * the admin app throw, in one list. docs/errors.md documents each one (code, class, status),
 * and a test holds the two together in both directions. The task half has its own list
 * (`taskErrors` of `fastify-switchyard/tasks`); the halves do not import each other.
 */
import { adminErrorCatalogue } from './admin/errors.js'
import { coreErrorCatalogue } from './core/errors.js'
import { flagErrorCatalogue } from './flags/errors.js'
import { RateLimitExceededError } from './rate-limit/exceeded.js'
import {
  SdkConnectionError,
  SdkProtocolError,
  SdkReadOnlyError,
  SdkWriteError,
} from './sdk/errors.js'

/**
 * Every coded error class of route control: subclasses of `SwitchyardError`, and the three errors
 * for a refused request that the admin app shares with the task admin.
 */
export const errorCatalogue = [
  ...coreErrorCatalogue,
  ...flagErrorCatalogue,
  ...adminErrorCatalogue,
  RateLimitExceededError,
  SdkConnectionError,
  SdkProtocolError,
  SdkReadOnlyError,
  SdkWriteError,
] as const
