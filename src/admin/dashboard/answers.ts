/**
 * How dashboard actions answer htmx: a success closes the dialog, shows a toast and refreshes
 * the changed records; an API error (a {@link SwitchyardError}) becomes a toast with its
 * message and status, or the form again with the message next to its field. A page that reads
 * shows an API error in place of what it could not load.
 */
import type { FastifyReply } from 'fastify'
import { SwitchyardError } from '../../core/errors.js'
import { trigger } from '../../ui/index.js'

/** Answers a successful action: a toast, the dialog closed, the changed records refreshed. */
export function done(
  reply: FastifyReply,
  message: string,
  refresh?: { type: string; keys?: string[] },
): FastifyReply {
  trigger(reply, {
    'ui-toast': { message, kind: 'success' },
    'ui-close-dialog': true,
    ...(refresh === undefined ? {} : { 'ui-refresh': refresh }),
  })
  return reply.status(200).header('hx-reswap', 'none').send('')
}

/** Answers a failed one-click action with a toast carrying the API's message. */
export function failed(reply: FastifyReply, error: SwitchyardError): FastifyReply {
  trigger(reply, { 'ui-toast': { message: error.message, kind: 'error' } })
  return reply.status(error.statusCode).send('')
}

/**
 * Runs an action; an API error goes to `onError` (default: a toast), anything else is a bug
 * and propagates to the error handler.
 */
export async function attempt<T>(
  reply: FastifyReply,
  action: () => T | Promise<T>,
  onError: (error: SwitchyardError) => T | Promise<T> = (error) => failed(reply, error) as T,
): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (!(error instanceof SwitchyardError)) throw error
    return await onError(error)
  }
}

/** What a page shows: what it loaded, or the API's message when loading failed. */
export type Loaded<T> = { result: T; error: undefined } | { result: null; error: string }

/**
 * Loads what a page shows; an API error becomes its message (the page shows it in place of the
 * data), anything else is a bug and propagates to the error handler.
 */
export async function loadOrError<T>(load: () => T | Promise<T>): Promise<Loaded<T>> {
  try {
    return { result: await load(), error: undefined }
  } catch (error) {
    if (!(error instanceof SwitchyardError)) throw error
    return { result: null, error: error.message }
  }
}
