/** Periodic and one-off scheduling for the task manager. */
export { PeriodicTrigger, ScheduledEntry, type ScheduleTrigger } from './trigger.js'
export {
  SchedulerLoop,
  MIN_SLOT_LEASE_MS,
  type SchedulerLoopOptions,
  type SlotFire,
  type SlotStore,
} from './scheduler-loop.js'
export {
  OneOffScheduler,
  assertOneOffSupport,
  type OneOffSchedulerOptions,
  type OneOffStore,
  type OneOffRun,
} from './one-off-scheduler.js'
export {
  ScheduleError,
  ScheduleNotFoundError,
  OneOffNextRunError,
  ScheduleOnceUnsupportedError,
} from './errors.js'
export { systemLoopTimer, type LoopTimer, type LoopClock } from './timer.js'
