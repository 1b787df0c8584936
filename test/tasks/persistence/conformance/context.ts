/**
 * What every port suite of the task-store conformance receives: two store instances (own
 * connection pools) over the same namespace, so races between them are real races between
 * connections, and the shared fixtures.
 */
import { it } from 'vitest'
import type { DurableTaskStore, OneOffEntry } from '../../../../src/tasks/stores/ports.js'

/** How a test file provides its store. */
export interface ConformanceTarget {
  name: string
  enabled: () => Promise<boolean>
  /** A NEW store instance over the same namespace. */
  open: () => DurableTaskStore
  cleanup: () => Promise<void>
}

/** The two instances of a run (set in `beforeAll`) and the test function to use. */
export interface SuiteContext {
  a: () => DurableTaskStore
  b: () => DurableTaskStore
  test: typeof it | typeof it.skip
}

/** The suites' reference time. */
export const T0 = Date.parse('2026-11-21T12:00:00Z')

/** A one-off entry for the tests. */
export function oneOff(
  runKey: string,
  runAt: number,
  overrides: Partial<OneOffEntry> = {},
): OneOffEntry {
  return {
    run_key: runKey,
    func_name: 'work',
    run_at: runAt,
    args: [runKey],
    encrypted_args: null,
    tags: {},
    priority: null,
    queue: null,
    idempotency_key: null,
    created_at: T0,
    ...overrides,
  }
}

/** An ISO timestamp of epoch ms. */
export const iso = (ms: number): string => new Date(ms).toISOString()
