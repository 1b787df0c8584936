/**
 * How route control's change feed appears on the admin event stream (`GET /api/events`).
 */
import type { ChangeEvent } from '../../core/events.js'
import type { StreamEvent } from '../../common/sse-hub.js'

/**
 * Converts a change-feed event into a stream event: an audit event carries the entry itself;
 * every other event its members without `type` and the store's internal `version` (so event
 * types added to the change feed later reach the stream unchanged).
 */
export function toStreamEvent(event: ChangeEvent): StreamEvent {
  if (event.type === 'audit') return { type: event.type, data: event.entry }
  const { type, version: _version, ...data } = event
  return { type, data }
}
