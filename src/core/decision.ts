/**
 * Decisions: what enforcement concludes for one request. Expected outcomes (maintenance,
 * disabled, not found, deprecation headers) are values, never exceptions, so the hot path
 * allocates nothing when a request simply passes.
 */

/**
 * A response header as a name/value pair. Names are lower case, as Fastify sends them, so that
 * setting one costs no case conversion per request.
 */
export type Header = readonly [name: string, value: string]

/** The JSON body of every blocked response: `{error: {code, message, ...}}`. */
export interface ErrorBody {
  error: { code: string; message: string; [member: string]: unknown }
}

/** Let the request through, adding `headers` (deprecation, rate-limit) to the response. */
export interface PassDecision {
  readonly action: 'pass'
  readonly headers: readonly Header[] | null
}

/** Answer at once with `statusCode`, `body` and `headers`; the handler does not run. */
export interface BlockDecision {
  readonly action: 'block'
  readonly statusCode: number
  readonly body: ErrorBody
  readonly headers: readonly Header[]
}

/** Answer with the application's own not-found response (env-gated route). */
export interface NotFoundDecision {
  readonly action: 'not_found'
}

/** The outcome of enforcement for one request. */
export type Decision = PassDecision | BlockDecision | NotFoundDecision

/** The shared decision for a request that passes with no extra headers. */
export const PASS: PassDecision = Object.freeze({ action: 'pass', headers: null })

/** The shared not-found decision. */
export const NOT_FOUND: NotFoundDecision = Object.freeze({ action: 'not_found' })
