/**
 * The one polling helper of the tests: waits for a condition that another connection, process
 * or timer makes true, instead of sleeping for a fixed time and hoping.
 */

/**
 * Polls `check` (sync or async) every few milliseconds until it holds; rejects after
 * `timeoutMs` (default 10 s: a generous ceiling never slows a passing test). Resolves with the
 * milliseconds it took, for tests that print a measured latency.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<number> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > timeoutMs)
      throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return performance.now() - started
}
