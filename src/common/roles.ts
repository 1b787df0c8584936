/**
 * The roles of both admin mounts (route control's admin app and the task admin). Each role
 * includes the one before it:
 *
 * - `viewer` — every read: lists, details, streams, dashboards without action buttons, audit,
 *   metrics;
 * - `operator` — viewer + every runtime change (route states, maintenance, rate-limit policies
 *   and resets, flags and segments, task retry / cancel / replay / queue settings, schedules,
 *   applying a configuration document);
 * - `admin` — operator + credentials (evaluation keys, API tokens), deleting task history and
 *   applying a configuration document with prune (which deletes what it leaves out).
 *
 * A route declares the role it needs (`config.role`); a route that declares none needs
 * `viewer` for a safe method (GET, HEAD, OPTIONS) and `operator` for anything else, so a new
 * write endpoint is never open to viewers by omission.
 */
import { CodedError } from './errors.js'

/** A principal's role. */
export type Role = 'viewer' | 'operator' | 'admin'

/** Every role, weakest first. */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'admin']

const RANK: ReadonlyMap<Role, number> = new Map(ROLES.map((role, index) => [role, index]))

/** True for one of {@link ROLES}. */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && RANK.has(value as Role)
}

/** True when a principal holding `held` may do what needs `needed`. */
export function roleAllows(held: Role, needed: Role): boolean {
  return (RANK.get(held) ?? -1) >= (RANK.get(needed) ?? Infinity)
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The role a route needs: the one it declares, else `viewer` to read and `operator` to write. */
export function requiredRole(method: string, declared: Role | undefined): Role {
  if (declared !== undefined) return declared
  return SAFE_METHODS.has(method) ? 'viewer' : 'operator'
}

/** A principal without the role (or outside the service) an action needs. */
export class ForbiddenError extends CodedError {
  readonly code = 'FORBIDDEN'
  readonly statusCode = 403

  constructor(message: string, requiredRole?: Role) {
    super(message, requiredRole === undefined ? {} : { required_role: requiredRole })
  }
}

/** The error for a principal whose role is below `needed`. */
export function forbiddenFor(held: Role, needed: Role): ForbiddenError {
  return new ForbiddenError(
    `This action needs the ${needed} role; you are signed in as ${held === 'viewer' ? 'a' : 'an'} ${held}.`,
    needed,
  )
}
