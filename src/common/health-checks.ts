/**
 * Readiness checks: named probes of what an instance needs to serve (its replica, its store,
 * its central server), each run with a deadline so a hanging backend never hangs the probe.
 */

/** The result of one check; `detail` is safe to show anyone (no URLs, secrets or stacks). */
export interface CheckResult {
  status: 'ok' | 'failing'
  detail?: string
}

/** One readiness check. */
export interface HealthCheck {
  /** Its name in the `checks` object of the readiness body, e.g. `backend`. */
  readonly name: string
  /**
   * Whether a failing result makes the instance unready (503). A check that is not critical
   * still shows `failing` but leaves the instance in rotation.
   */
  critical(): boolean
  /** Runs the check; a throw or a result later than the deadline counts as failing. */
  run(): CheckResult | Promise<CheckResult>
}

/** The body of a readiness answer. */
export interface ReadinessBody {
  status: 'ok' | 'unavailable'
  checks: Record<string, CheckResult>
}

/** Longest wait for one check, in milliseconds. */
export const CHECK_DEADLINE_MS = 1000

/**
 * The readiness checks of one app, with its closing flag: once the app starts closing it is
 * unready whatever the checks say, so a load balancer drains it before it stops.
 */
export class Readiness {
  private readonly checks = new Map<string, HealthCheck>()
  private isClosing = false

  constructor(private readonly deadlineMs: number = CHECK_DEADLINE_MS) {}

  /** Adds (or replaces, by name) a check. */
  add(check: HealthCheck): void {
    this.checks.set(check.name, check)
  }

  /** Marks the app as closing: readiness answers 503 from now on. */
  markClosing(): void {
    this.isClosing = true
  }

  /** Whether the app has started closing. */
  get closing(): boolean {
    return this.isClosing
  }

  /** Runs every check concurrently, each with its deadline, and returns the status and body. */
  async evaluate(): Promise<{ statusCode: 200 | 503; body: ReadinessBody }> {
    const entries = [...this.checks.values()]
    const results = await Promise.all(
      entries.map((check) => runWithDeadline(check, this.deadlineMs)),
    )
    const checks: Record<string, CheckResult> = {}
    let ready = !this.isClosing
    entries.forEach((check, index) => {
      const result = results[index] as CheckResult
      checks[check.name] = result
      if (result.status === 'failing' && check.critical()) ready = false
    })
    if (this.isClosing) checks.shutdown = { status: 'failing', detail: 'the app is closing' }
    return {
      statusCode: ready ? 200 : 503,
      body: { status: ready ? 'ok' : 'unavailable', checks },
    }
  }
}

/** Runs one check; never rejects and never waits longer than `deadlineMs`. */
export async function runWithDeadline(
  check: HealthCheck,
  deadlineMs: number,
): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 'failing', detail: `no answer within ${deadlineMs} ms` }),
      deadlineMs,
    )
    timer.unref()
  })
  try {
    return await Promise.race([Promise.resolve().then(() => check.run()), late])
  } catch (error) {
    return { status: 'failing', detail: safeDetail(error) }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * An error reduced to something safe for an unauthenticated caller: its system code or class
 * name, never its message (a driver's message may hold a connection URL with a password).
 */
export function safeDetail(error: unknown): string {
  const failure = error instanceof Error ? error : new Error(String(error))
  const { code } = failure as { code?: unknown }
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return `unreachable (${code})`
  return `unreachable (${failure.name})`
}
