/**
 * Errors of the flag subsystem. They extend the route-control catalogue's base class, so the
 * admin API renders them with the shared `{error: {code, message, ...}}` body; invalid input
 * reuses {@link ValidationError}.
 */
import { SwitchyardError } from '../core/errors.js'

/** A flag key that names no flag (404 `FLAG_NOT_FOUND`). */
export class FlagNotFoundError extends SwitchyardError {
  readonly code = 'FLAG_NOT_FOUND'
  readonly statusCode = 404
}

/** A rollback to a version the flag's history does not keep (404 `FLAG_VERSION_NOT_FOUND`). */
export class FlagVersionNotFoundError extends SwitchyardError {
  readonly code = 'FLAG_VERSION_NOT_FOUND'
  readonly statusCode = 404
}

/** A scheduled change id that names no pending change of the flag (404 `FLAG_SCHEDULE_NOT_FOUND`). */
export class FlagScheduleNotFoundError extends SwitchyardError {
  readonly code = 'FLAG_SCHEDULE_NOT_FOUND'
  readonly statusCode = 404
}

/** Creating a flag whose key is taken (409 `FLAG_EXISTS`). */
export class FlagExistsError extends SwitchyardError {
  readonly code = 'FLAG_EXISTS'
  readonly statusCode = 409
}

/** A write that would make prerequisites circular; `cycle` lists the keys, first key repeated last. */
export class FlagPrerequisiteCycleError extends SwitchyardError {
  readonly code = 'FLAG_PREREQUISITE_CYCLE'
  readonly statusCode = 409

  constructor(readonly cycle: readonly string[]) {
    super(`Circular flag prerequisites: ${cycle.join(' -> ')}.`, { cycle: [...cycle] })
  }
}

/** Deleting a flag that other flags name as a prerequisite (409 `FLAG_IN_USE`, `flags`). */
export class FlagInUseError extends SwitchyardError {
  readonly code = 'FLAG_IN_USE'
  readonly statusCode = 409
}

/** A segment key that names no segment (404 `SEGMENT_NOT_FOUND`). */
export class SegmentNotFoundError extends SwitchyardError {
  readonly code = 'SEGMENT_NOT_FOUND'
  readonly statusCode = 404
}

/** Deleting a segment that flags still reference (409 `SEGMENT_IN_USE`, `flags`). */
export class SegmentInUseError extends SwitchyardError {
  readonly code = 'SEGMENT_IN_USE'
  readonly statusCode = 409
}

/** Every error class of the flag subsystem, for docs and tests that keep them in sync. */
export const flagErrorCatalogue = [
  FlagNotFoundError,
  FlagVersionNotFoundError,
  FlagScheduleNotFoundError,
  FlagExistsError,
  FlagPrerequisiteCycleError,
  FlagInUseError,
  SegmentNotFoundError,
  SegmentInUseError,
] as const
