/**
 * OFREP evaluation over a flag service, free of HTTP: reading a request body, evaluating one
 * flag or all of them, and the bulk answer's ETag. The routes (`routes.ts`) only move bytes.
 *
 * Answers follow the OpenFeature Remote Evaluation Protocol: a success is
 * `{key, value, reason, variant, metadata}` with OpenFeature's reason and the flag's own
 * metadata in `metadata` (plus switchyard's reason, rule id and prerequisite key under the
 * reserved `switchyard.` keys with the option `detailedMetadata`) — the same details the
 * in-process provider gives; a failure is `{key, errorCode, errorDetails}`. The context is an OpenFeature
 * context, mapped exactly as the in-process provider maps it.
 *
 * Why JSON text is cached per result: the evaluator returns one frozen result object per
 * flag outcome, so the JSON of each outcome is built once and a bulk answer is a join.
 */
import { createHash, hash } from 'node:crypto'
import { fromFlatContext, openFeatureTargetingKey } from '../../flags/context.js'
import type { EvaluationContext, ResolutionDetails } from '../../flags/model.js'
import { openFeatureMetadata, openFeatureReason } from '../../flags/openfeature-reasons.js'
import type { FlagService } from '../../flags/service.js'
import type { FlagScope } from '../auth/flag-scope.js'

/** An OFREP error code (OpenFeature's). */
export type OfrepErrorCode =
  'PARSE_ERROR' | 'INVALID_CONTEXT' | 'TARGETING_KEY_MISSING' | 'FLAG_NOT_FOUND' | 'GENERAL'

/** A request body that is not an OFREP evaluation request. */
export interface OfrepRequestProblem {
  errorCode: 'PARSE_ERROR' | 'INVALID_CONTEXT'
  errorDetails: string
}

/** A parsed request: the evaluation context and the context as sent (for the bulk ETag). */
export interface OfrepRequest {
  context: EvaluationContext
  /** The context object of the body (hashed into the bulk ETag; serialised only then). */
  flat: Readonly<Record<string, unknown>>
}

/** The answer to a single evaluation: an HTTP status and a JSON body, as text. */
export interface OfrepAnswer {
  status: 200 | 400 | 404 | 500
  body: string
}

const EMPTY_FLAT = Object.freeze({})

/** Most scoped fingerprints remembered between two changes (one per distinct set of patterns). */
const MAX_SCOPED_FINGERPRINTS = 1000

/**
 * Reads `{"context": {...}}`. A body that is not an object is a PARSE_ERROR; a context that
 * is not an object, or a `targetingKey` that is not a string, is an INVALID_CONTEXT.
 */
export function readRequest(body: unknown): OfrepRequest | OfrepRequestProblem {
  if (body === undefined || body === null) return toRequest(EMPTY_FLAT)
  if (typeof body !== 'object' || Array.isArray(body)) {
    return { errorCode: 'PARSE_ERROR', errorDetails: 'The body must be a JSON object.' }
  }
  const context = (body as { context?: unknown }).context
  if (context === undefined || context === null) return toRequest(EMPTY_FLAT)
  if (typeof context !== 'object' || Array.isArray(context)) {
    return { errorCode: 'INVALID_CONTEXT', errorDetails: '`context` must be a JSON object.' }
  }
  const flat = context as Record<string, unknown>
  const targetingKey = flat.targetingKey
  if (targetingKey !== undefined && typeof targetingKey !== 'string') {
    return { errorCode: 'INVALID_CONTEXT', errorDetails: '`targetingKey` must be a string.' }
  }
  return toRequest(flat)
}

function toRequest(flat: Readonly<Record<string, unknown>>): OfrepRequest {
  return { context: fromFlatContext(flat, openFeatureTargetingKey(flat)), flat }
}

/** True for {@link readRequest}'s failures. */
export function isProblem(value: OfrepRequest | OfrepRequestProblem): value is OfrepRequestProblem {
  return 'errorCode' in value
}

/** The JSON of a failure entry (or body) for `key`. */
export function failureJson(key: string, errorCode: OfrepErrorCode, errorDetails: string): string {
  return JSON.stringify({ key, errorCode, errorDetails })
}

/** Evaluates flags for OFREP answers, with per-outcome JSON and the flag-set fingerprint. */
export class OfrepEvaluator {
  private readonly json = new WeakMap<ResolutionDetails, string>()
  private fingerprintValue: string | null = null
  /** The fingerprint of each scope's flags, by {@link FlagScope.signature}; cleared on change. */
  private readonly scopedFingerprints = new Map<string, string>()
  private sortedKeys: string[] | null = null
  private readonly unsubscribe: () => void

  /** `detailed` adds switchyard's own details to every `metadata` (`ofrep.detailedMetadata`). */
  constructor(
    private readonly service: FlagService,
    private readonly detailed = false,
  ) {
    this.unsubscribe = service.onChange(() => {
      this.fingerprintValue = null
      this.scopedFingerprints.clear()
      this.sortedKeys = null
    })
  }

  /** Stops following the service's changes. */
  close(): void {
    this.unsubscribe()
  }

  /**
   * Evaluates one flag: 200, or 404 / 400 / 500 with an OFREP failure body. A flag outside
   * `scope` is not evaluated and answers exactly as a flag that does not exist.
   */
  evaluate(key: string, context: EvaluationContext, scope: FlagScope | null = null): OfrepAnswer {
    if (scope !== null) {
      const compiled = this.service.snapshot.flags.get(key)
      if (compiled === undefined || !scope.includes(compiled.flag)) return notFound(key)
    }
    const result = this.service.evaluateContext(key, context)
    if (result.variation !== null) return { status: 200, body: this.successJson(key, result) }
    const code = errorCodeOf(result)
    if (code === 'FLAG_NOT_FOUND') return notFound(key)
    return {
      status: code === 'GENERAL' ? 500 : 400,
      body: failureJson(key, code, errorText(result)),
    }
  }

  /**
   * The `flags` array of a bulk answer as JSON text: every flag (in `scope`, when given), by
   * key, each a success or a failure entry. Evaluations reach the evaluation stream like any
   * other.
   */
  evaluateAllJson(context: EvaluationContext, scope: FlagScope | null = null): string {
    const keys = (this.sortedKeys ??= [...this.service.snapshot.flags.keys()].sort())
    const flags = this.service.snapshot.flags
    const parts: string[] = []
    for (const key of keys) {
      if (scope !== null) {
        const compiled = flags.get(key)
        if (compiled === undefined || !scope.includes(compiled.flag)) continue
      }
      const result = this.service.evaluateContext(key, context)
      parts.push(
        result.variation !== null
          ? this.successJson(key, result)
          : failureJson(key, errorCodeOf(result), errorText(result)),
      )
    }
    return `[${parts.join(',')}]`
  }

  /**
   * A fingerprint of every flag and segment (content, not an instance-local counter, so
   * instances holding the same flags agree); recomputed after each change. With a `scope`,
   * of the flags in it and every segment only: a change to a flag outside a key's set leaves
   * the key's fingerprint (its ETags and its stream) as it was, so it cannot reveal the flag.
   */
  fingerprint(scope: FlagScope | null = null): string {
    if (scope === null) return (this.fingerprintValue ??= this.computeFingerprint(null))
    const signature = scope.signature
    let value = this.scopedFingerprints.get(signature)
    if (value === undefined) {
      // Bounded by the number of keys; a full table starts again rather than grow.
      if (this.scopedFingerprints.size >= MAX_SCOPED_FINGERPRINTS) this.scopedFingerprints.clear()
      value = this.computeFingerprint(scope)
      this.scopedFingerprints.set(signature, value)
    }
    return value
  }

  private computeFingerprint(scope: FlagScope | null): string {
    const hash = createHash('sha256')
    const { flags, segments } = this.service.snapshot
    hash.update('flags')
    const visible = [...flags.values()]
      .map((c) => c.flag)
      .filter((flag) => scope === null || scope.includes(flag))
    for (const flag of sortByKey(visible)) hash.update(JSON.stringify(flag))
    hash.update('segments')
    for (const segment of sortByKey([...segments.values()].map((c) => c.segment)))
      hash.update(JSON.stringify(segment))
    return hash.digest('base64url').slice(0, 22)
  }

  /**
   * The bulk answer's ETag: the fingerprint of the flags the caller may see (`flagScope`) and a
   * hash of the context and of who asked (`caller`, since the answer's stream URL depends on
   * the credential). Cheap: no evaluation is needed to answer a matching `If-None-Match` with
   * 304.
   */
  etag(
    flat: Readonly<Record<string, unknown>>,
    caller: string,
    flagScope: FlagScope | null = null,
  ): string {
    const context = hash('sha256', `${caller}\u0000${JSON.stringify(flat)}`, 'base64url')
    return `"${this.fingerprint(flagScope)}.${context.slice(0, 22)}"`
  }

  private successJson(key: string, result: ResolutionDetails): string {
    let text = this.json.get(result)
    if (text === undefined) {
      text = JSON.stringify({
        key,
        value: result.value,
        reason: openFeatureReason(result),
        variant: result.variation,
        metadata: openFeatureMetadata(result, this.detailed),
      })
      this.json.set(result, text)
    }
    return text
  }
}

/** The answer for a flag that does not exist (or that the caller may not see: the same bytes). */
function notFound(key: string): OfrepAnswer {
  return { status: 404, body: failureJson(key, 'FLAG_NOT_FOUND', `flag ${key} not found`) }
}

function sortByKey<T extends { key: string }>(records: T[]): T[] {
  return records.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

function errorCodeOf(result: ResolutionDetails): OfrepErrorCode {
  switch (result.error_code) {
    case 'FLAG_NOT_FOUND':
    case 'TARGETING_KEY_MISSING':
    case 'PARSE_ERROR':
      return result.error_code
    default:
      return 'GENERAL'
  }
}

const errorText = (result: ResolutionDetails) => result.error_message ?? 'evaluation failed'

/** True when an `If-None-Match` header names `etag` (a list, weak forms, or `*`). */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false
  for (const part of header.split(',')) {
    const candidate = part.trim()
    if (candidate === '*') return true
    if ((candidate.startsWith('W/') ? candidate.slice(2) : candidate) === etag) return true
  }
  return false
}
