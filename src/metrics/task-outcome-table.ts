/**
 * Task outcomes counted in plain objects, by function, queue and status, and handed to the
 * Prometheus registry at scrape time. A task is followed at every instance's full task rate, so
 * what it costs matters: one nested map lookup and a few additions per event, no label string or
 * object built, no label set hashed (prom-client hashes the labels on every `inc` and `observe`,
 * which cost about a third of the throughput of no-op tasks).
 */

/** Most function × queue pairs counted apart; past it they count under {@link OVERFLOW_LABEL}. */
export const MAX_SERIES = 10_000

/** The `function` and `queue` label of the pairs counted past {@link MAX_SERIES}. */
export const OVERFLOW_LABEL = '__other__'

/** The outcomes of one status of one function × queue pair. */
export interface StatusOutcome {
  /** Tasks that ended in the status. */
  count: number
  /** Of those that started: how many ran up to each bucket bound (not cumulative), and +Inf. */
  readonly buckets: Float64Array
  /** Total run time (seconds) of those that started. */
  sum: number
  /** How many of them started (the histogram's `_count`). */
  observed: number
}

/** The counts of one function × queue pair. */
export interface PairCounts {
  readonly labels: Readonly<{ function: string; queue: string }>
  /** Tasks taken in. */
  enqueued: number
  readonly statuses: Map<string, StatusOutcome>
  /** The status counted last and its outcome (a lookup spared for the next task). */
  lastStatus: string
  lastOutcome: StatusOutcome | null
}

/** Counts of task outcomes, with the duration buckets `bounds` (seconds, ascending). */
export class TaskOutcomeTable {
  readonly bounds: readonly number[]
  readonly #pairs = new Map<string, Map<string, PairCounts>>()
  #size = 0
  #overflow: PairCounts | null = null
  /**
   * The pair counted last: the events of a busy queue come mostly from one function, so two
   * string comparisons spare the two map lookups.
   */
  #last: PairCounts | null = null
  #lastFunc = ''
  #lastQueue = ''

  constructor(bounds: readonly number[]) {
    this.bounds = bounds
  }

  /** Counts a task taken in. */
  enqueued(func: string, queue: string): void {
    this.#pair(func, queue).enqueued++
  }

  /** Counts a task that ended in `status`, and its run time when it started (else null). */
  finished(func: string, queue: string, status: string, duration: number | null): void {
    const pair = this.#pair(func, queue)
    // Most tasks end in the status of the one before them.
    let outcome =
      pair.lastStatus === status && pair.lastOutcome !== null
        ? pair.lastOutcome
        : pair.statuses.get(status)
    if (outcome === undefined) {
      outcome = { count: 0, buckets: new Float64Array(this.bounds.length + 1), sum: 0, observed: 0 }
      pair.statuses.set(status, outcome)
    }
    pair.lastStatus = status
    pair.lastOutcome = outcome
    outcome.count++
    if (duration === null) return
    const bounds = this.bounds
    let bucket = 0
    while (bucket < bounds.length && duration > (bounds[bucket] ?? Infinity)) bucket++
    outcome.buckets[bucket] = (outcome.buckets[bucket] ?? 0) + 1
    outcome.sum += duration
    outcome.observed++
  }

  /** Every pair counted, for a scrape. */
  *pairs(): Iterable<PairCounts> {
    for (const queues of this.#pairs.values()) yield* queues.values()
    if (this.#overflow !== null) yield this.#overflow
  }

  #pair(func: string, queue: string): PairCounts {
    if (this.#last !== null && func === this.#lastFunc && queue === this.#lastQueue)
      return this.#last
    const pair = this.#lookup(func, queue)
    this.#last = pair
    this.#lastFunc = func
    this.#lastQueue = queue
    return pair
  }

  #lookup(func: string, queue: string): PairCounts {
    let queues = this.#pairs.get(func)
    const found = queues?.get(queue)
    if (found !== undefined) return found
    // Functions and queues are registered in code, so the pairs are bounded by it; should they
    // pass the bound anyway, new pairs count together rather than grow without end.
    if (this.#size >= MAX_SERIES) {
      this.#overflow ??= newPair(OVERFLOW_LABEL, OVERFLOW_LABEL)
      return this.#overflow
    }
    if (queues === undefined) {
      queues = new Map()
      this.#pairs.set(func, queues)
    }
    const pair = newPair(func, queue)
    queues.set(queue, pair)
    this.#size++
    return pair
  }
}

function newPair(func: string, queue: string): PairCounts {
  return {
    labels: { function: func, queue },
    enqueued: 0,
    statuses: new Map(),
    lastStatus: '',
    lastOutcome: null,
  }
}
