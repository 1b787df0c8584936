/**
 * Forward compatibility of everything switchyard reads from a channel another process writes
 * (pub/sub, record feeds, streams): a message this version cannot use — not JSON, the wrong
 * shape, or an event type a newer version added during a rolling upgrade — is ignored, never
 * thrown. Each is counted by kind, so the owner can see them, and logged once per kind and
 * type: a flood of garbage costs a counter increment each, not a log line each. A known event
 * with fields a newer version added is applied for what this version knows; the message is
 * counted as `unknown_field` and each (type, field) logged once.
 */

/** Why a message was ignored (in full, or for some of its fields: `unknown_field`). */
export type IgnoredKind = 'malformed' | 'unknown_type' | 'unknown_field'

/** Counts of ignored messages by kind. */
export type IgnoredMessageCounts = Readonly<Record<IgnoredKind, number>>

/** Distinct (kind, type) pairs remembered for logging once; past it nothing more is logged. */
const MAX_LOGGED = 100
/** Longest type name quoted in a log line (anything may be published). */
const MAX_TYPE_LENGTH = 64

/** The ignored messages of one reader. */
export class IgnoredMessages {
  readonly #counts: Record<IgnoredKind, number> = {
    malformed: 0,
    unknown_type: 0,
    unknown_field: 0,
  }
  readonly #logged = new Set<string>()

  /**
   * @param label what the reader reads, e.g. `rate-limit change message`
   * @param log where the first message of each kind and type is reported
   */
  constructor(
    private readonly label: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Counts one ignored message; logs it if its kind and type were not seen before. */
  ignore(kind: IgnoredKind, type: unknown, reason: string): void {
    this.#counts[kind]++
    const name = typeof type === 'string' ? type.slice(0, MAX_TYPE_LENGTH) : '(none)'
    const what = kind === 'unknown_type' ? `of unknown type ${JSON.stringify(name)}` : 'malformed'
    this.#logOnce(
      `${kind}\u0000${name}`,
      () =>
        `${this.label} ${what} ignored (${reason}); further ones of this kind are counted, not logged`,
    )
  }

  /**
   * Checks a known event's top-level fields against the ones this version reads: when it has
   * others (a newer writer added them), counts the message once and logs each new (type,
   * field) once. The event is still applied by the caller.
   */
  unknownFields(type: string, event: object, known: ReadonlySet<string>): void {
    let extra: string[] | null = null
    for (const field of Object.keys(event)) {
      if (!known.has(field)) (extra ??= []).push(field)
    }
    if (extra === null) return
    this.#counts.unknown_field++
    const name = type.slice(0, MAX_TYPE_LENGTH)
    for (const field of extra) {
      const quoted = JSON.stringify(field.slice(0, MAX_TYPE_LENGTH))
      this.#logOnce(
        `unknown_field\u0000${name}\u0000${quoted}`,
        () =>
          `${this.label} ${JSON.stringify(name)} has a field this version does not know, ${quoted}: applied without it; further ones are counted, not logged`,
      )
    }
  }

  /** Logs the message of `seen` the first time it comes, while fewer than the bound were. */
  #logOnce(seen: string, message: () => string): void {
    if (this.#logged.has(seen) || this.#logged.size >= MAX_LOGGED) return
    this.#logged.add(seen)
    this.log(message())
  }

  /** The counts so far. */
  counts(): IgnoredMessageCounts {
    return { ...this.#counts }
  }
}

/**
 * The channels whose ignored messages an engine counts (the label values of the
 * `switchyard_unknown_messages_total` metric: a fixed set, never taken from a message).
 */
export type IgnoredChannel = 'route_state' | 'flags' | 'rate_limit'

/** Every ignored message in `counts` (none when the reader has no channel). */
export function totalIgnored(counts: IgnoredMessageCounts | undefined): number {
  return counts === undefined ? 0 : counts.malformed + counts.unknown_type + counts.unknown_field
}

/** The `type` field of a parsed message, if it has one. */
export function messageType(value: unknown): unknown {
  return typeof value === 'object' && value !== null
    ? (value as { type?: unknown }).type
    : undefined
}
