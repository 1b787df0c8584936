/**
 * Logging out, as the REST API (`POST /api/auth/logout`) and the dashboard (`POST {admin}/logout`)
 * both do it: the token is revoked in the store, so every instance refuses it, and the event
 * streams the session opened on this instance end with it (other instances notice the
 * revocation at their next session check). A task admin sharing the login ends its streams of
 * the session too.
 */
import type { AdminContext } from '../context.js'
import type { Session } from './sessions.js'

/** Revokes `session` and closes its streams; true when the token was still valid. */
export async function endSession(context: AdminContext, session: Session): Promise<boolean> {
  if (context.sessions === null) return false
  const revoked = await context.sessions.revoke(session)
  context.streams.revoked(session.tokenHash)
  context.sharedLogin?.revoked(session.tokenHash)
  return revoked
}
