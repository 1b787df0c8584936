/**
 * A circuit breaker for calls on the request path that must never make a request wait on a
 * backend that is down or stalled (the Redis rate-limit counters).
 *
 * Closed: calls go through. After `threshold` consecutive failures (errors or missed
 * deadlines) it opens: calls are refused at once, without touching the backend, for
 * `cooldownMs`. Then one trial call goes through: its success closes the circuit, its failure
 * opens it for another cool-down. Opening and closing are reported once each, so a stalled
 * backend costs one log line, not one per request.
 */

/** A call refused because the circuit is open (the caller fails open without logging). */
export class CircuitOpenError extends Error {
  constructor(what: string) {
    super(`${what}: circuit open after repeated failures; not calling for now`)
    this.name = 'CircuitOpenError'
  }
}

/** Options of a {@link CircuitBreaker}. */
export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit (default 5). */
  threshold?: number
  /** How long the circuit stays open before a trial call, in ms (default 1000). */
  cooldownMs?: number
  /** Time source (default `Date.now`). */
  now?: () => number
  /** The circuit opened, after `error`. */
  onOpen?: (error: Error) => void
  /** The circuit closed again (a trial call succeeded). */
  onClose?: () => void
}

/** Counts failures of one kind of call and decides whether the next one may go through. */
export class CircuitBreaker {
  private failures = 0
  /** 0 while closed; otherwise when the next trial call may go. */
  private openUntil = 0
  private trialInFlight = false
  private readonly threshold: number
  private readonly cooldownMs: number
  private readonly now: () => number

  constructor(private readonly options: CircuitBreakerOptions = {}) {
    this.threshold = options.threshold ?? 5
    this.cooldownMs = options.cooldownMs ?? 1000
    this.now = options.now ?? Date.now
  }

  /** True while calls are refused. */
  get open(): boolean {
    return this.openUntil !== 0
  }

  /** Whether a call may go now: always when closed; once per cool-down (the trial) when open. */
  allow(): boolean {
    if (this.openUntil === 0) return true
    if (this.trialInFlight || this.now() < this.openUntil) return false
    this.trialInFlight = true
    return true
  }

  /** Records a successful call. */
  success(): void {
    this.failures = 0
    if (this.openUntil === 0) return
    this.openUntil = 0
    this.trialInFlight = false
    this.options.onClose?.()
  }

  /** Records a failed call (an error or a missed deadline). */
  failure(error: Error): void {
    if (this.openUntil !== 0) {
      // The trial failed (or a call sent before the circuit opened): wait another cool-down.
      this.trialInFlight = false
      this.openUntil = this.now() + this.cooldownMs
      return
    }
    this.failures += 1
    if (this.failures < this.threshold) return
    this.openUntil = this.now() + this.cooldownMs
    this.options.onOpen?.(error)
  }
}
