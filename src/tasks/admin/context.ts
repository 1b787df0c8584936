/**
 * What every group of task-admin routes receives: the Fastify instance (typed by the TypeBox
 * provider, so handler inputs are typed from their schemas), the manager, and the mount's
 * services and settings.
 */
import type { ConsoleSlot } from '../../common/console-registry.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { LoginThrottle } from '../../common/login-throttle.js'
import type { AllowedHosts } from '../../common/same-origin.js'
import type { TaskManager } from '../manager.js'
import type { SessionRevocationStore, TaskAdminStore } from '../stores/ports.js'
import type { ClientInfo } from './auth/client.js'
import type { CredentialCheck } from './auth/credentials.js'
import { actorOf, type TaskAdminSessions } from './auth/sessions.js'
import { serializeAudit } from './serialize.js'
import type { TaskStream } from './stream.js'

/** The task admin's Fastify instance, with TypeBox type inference. */
export type TaskAdminInstance = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

/** Shared services and settings of one mount. */
export interface TaskAdminContext {
  manager: TaskManager
  /** The mount path, e.g. `/tasks` (`` at the root). */
  base: string
  title: string
  pollInterval: number
  displayFuncArgs: boolean
  /** Whether the detail page shows a run's result. */
  displayResults: boolean
  publicStream: boolean
  tokenExpiry: number
  /** Audit and queue configs: the durable store's, or in memory. */
  data: TaskAdminStore
  revocations: SessionRevocationStore
  /** Null without `auth`. */
  credentials: CredentialCheck | null
  /** Null without `auth`. */
  sessions: TaskAdminSessions | null
  throttle: LoginThrottle
  client: ClientInfo
  /** The `Host` check (`allowedHosts`), or null for none. */
  hosts: AllowedHosts | null
  stream: TaskStream
  /** Most records one bulk action by filter acts on. */
  bulkLimit: number
  now: () => number
  /**
   * This mount's place in the console it forms with the route-control admin on the same app
   * (one header and navigation; common/console-registry.ts); null when another task admin
   * joined first.
   */
  console: ConsoleSlot | null
}

/** A path under the mount. */
export function mountPath(context: TaskAdminContext, path: string): string {
  return `${context.base}${path}`
}

/**
 * Appends a task-audit entry for the request's actor, and tells the console it shares with
 * the route-control admin, whose one Audit page follows both logs live.
 */
export async function audit(
  context: TaskAdminContext,
  request: FastifyRequest,
  action: string,
  taskId: string | null,
  detail: Record<string, unknown>,
): Promise<void> {
  const entry = await context.data.appendAudit({
    timestamp: context.now(),
    action,
    task_id: taskId,
    actor: actorOf(request),
    detail,
  })
  const { detail: _detail, ...notice } = serializeAudit(entry)
  context.console?.taskAuditWritten(notice)
}
