/**
 * `fastify-switchyard/tasks`: the task manager, its records, queues, executors, observers and errors.
 */
export { TaskManager, type TaskRetryResult } from './manager.js'
export type { TaskManagerOptions, AddTaskOptions, TaskManagerLogger } from './options.js'
export type { TaskQuery } from './task-query.js'
export type { TaskMetrics, FunctionMetrics, MetricsMinute } from './metrics-report.js'
export type { ScheduleOptions, ScheduleInfo } from './schedules.js'
export type { ScheduleOnceOptions } from './one-offs.js'
export type { DebounceOptions } from './debounce.js'
export {
  isTaskHandle,
  type TaskOptions,
  type TaskDefinition,
  type TaskHandle,
  type TaskFunction,
} from './registry.js'
export { isTaskWorker } from './worker-registry.js'
export {
  getTaskContext,
  taskLog,
  taskProgress,
  type TaskContext,
  type TaskLogOptions,
} from './context.js'
export {
  LOG_LEVELS,
  formatLogLine,
  retryMarker,
  type TaskRecord,
  type StoredTask,
  type ExecutorKind,
  type LogLevel,
  type TaskSource,
} from './record.js'
export {
  TASK_STATUSES,
  TERMINAL_STATUSES,
  RETRYABLE_STATUSES,
  canTransition,
  type TaskStatus,
} from './status.js'
export { memoryTaskStore, type TaskStore, type MaybePromise } from './stores/memory.js'
export { DEFAULT_QUEUE, type QueueOptions } from './queues/queue-set.js'
export type { QueueConfig, QueueStats } from './queues/queue.js'
export { generateEncryptionKey, type EncryptionKeyInput } from './encryption.js'
export { systemTaskClock, toIso, type TaskClock } from './time.js'
export type { LifecycleHost } from './lifecycle.js'
export type {
  TaskObserver,
  TaskLogEvent,
  TaskLifecycleEvent,
  TaskObserverEvent,
} from './observers/types.js'
export { MemoryObserver } from './observers/memory.js'
export { StdoutObserver, type StdoutObserverOptions } from './observers/stdout.js'
export { FileObserver, type FileObserverOptions } from './observers/file.js'
export {
  TaskError,
  TaskValidationError,
  QueueFullError,
  TaskArgumentError,
  TaskNotFoundError,
  TaskNotCancellableError,
  TaskNotRetryableError,
  TaskAlreadyRetriedError,
  TaskNotRegisteredError,
  QueueNotFoundError,
  ManagerClosedError,
  WorkerCrashedError,
  TaskTimeoutError,
  FlowChildFailedError,
  FlowResultTooLargeError,
  taskErrorCatalogue,
} from './errors.js'
export type { FlowSpec, ChainStep } from './flows/spec.js'
export { MAX_FLOW_NODES } from './flows/spec.js'
export { DEFAULT_MAX_RESULT_BYTES } from './flows/results.js'
export { TaskAbort, type TaskAbortKind } from './cancellation.js'
export * from './admin/error-classes.js'
export {
  BadRequestError,
  BodyTooLargeError,
  CrossOriginRequestError,
  MisdirectedRequestError,
  UnsupportedMediaTypeError,
} from '../common/request-errors.js'
export { ForbiddenError, ROLES, type Role } from '../common/roles.js'
export { taskErrors } from './error-catalogue.js'
export {
  sqliteStore,
  postgresStore,
  mysqlStore,
  redisStore,
  StoreError,
  StoreDriverMissingError,
  type DurableTaskStore,
  type TaskRecordStore,
  type PendingQueueStore,
  type IdempotencyStore,
  type ScheduleSlotStore,
  type UnconfirmedSlotQuery,
  type OneOffScheduleStore,
  type TaskAdminStore,
  type SessionRevocationStore,
  type TaskMetricsStore,
  type TaskChangeFeed,
  type TaskChange,
  type TaskListQuery,
  type TaskPage,
  type OneOffEntry,
  type StoredQueueConfig,
  type StoredScheduleControl,
  type TaskAuditEntry,
  type TaskWorkerStore,
  type StoredWorker,
  type WorkerTask,
} from './stores/index.js'
export { type WorkerInfo } from './workers.js'
export {
  PeriodicTrigger,
  ScheduledEntry,
  ScheduleError,
  ScheduleNotFoundError,
  OneOffNextRunError,
  ScheduleOnceUnsupportedError,
  type ScheduleTrigger,
  type LoopTimer,
  type LoopClock,
} from './scheduling/index.js'
