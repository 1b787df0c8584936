/**
 * The task-store conformance: one suite per port (records, pending queue, idempotency keys and
 * their batched claims, schedule slots, one-off schedules, admin data, sessions, metrics, change
 * feed, workers, task gates, flows), plus cancel and operator pauses across managers, each run on
 * every backend.
 */
import { afterAll, beforeAll, describe, it } from 'vitest'
import type { DurableTaskStore } from '../../../../src/tasks/stores/ports.js'
import type { ConformanceTarget, SuiteContext } from './context.js'
import { adminDataSuite, sessionsSuite } from './admin-data.js'
import { cancelSuite } from './cancel.js'
import { gatesSuite, storeGates } from './gates.js'
import { groupCountsSuite } from './group-counts.js'
import { idempotencyBatchSuite, idempotencySuite, scheduleSlotsSuite } from './claims.js'
import { flowsSuite } from './flows.js'
import { debounceSuite, oneOffSuite } from './one-offs.js'
import { pendingQueueSuite } from './pending-queue.js'
import { pauseSuite } from './pause.js'
import { changesSuite, metricsSuite } from './metrics.js'
import { recordsSuite, retentionCascadeSuite } from './records.js'
import { workersSuite } from './workers.js'

export type { ConformanceTarget } from './context.js'

/** Registers every port suite for `target`. */
export function storeConformance(target: ConformanceTarget): void {
  describe(`${target.name} task store conformance`, async () => {
    const enabled = await target.enabled()
    let a: DurableTaskStore
    let b: DurableTaskStore
    beforeAll(async () => {
      if (!enabled) return
      a = target.open()
      b = target.open()
      // Two instances starting at once on a fresh namespace: the migration lock serialises them.
      await Promise.all([a.init(), b.init()])
    })
    afterAll(async () => {
      if (!enabled) return
      await a.close()
      await b.close()
      await target.cleanup()
    })
    const context: SuiteContext = { a: () => a, b: () => b, test: enabled ? it : it.skip }
    describe('records', () => recordsSuite(context))
    describe('retention cascade', () => retentionCascadeSuite(context))
    describe('metrics', () => metricsSuite(context))
    describe('change feed', () => changesSuite(context))
    describe('pending queue', () => pendingQueueSuite(context))
    describe('idempotency keys', () => idempotencySuite(context))
    describe('batched idempotency claims', () => idempotencyBatchSuite(context))
    describe('schedule slots', () => scheduleSlotsSuite(context))
    describe('one-off schedules', () => oneOffSuite(context))
    describe('debounced entries', () => debounceSuite(context))
    describe('admin data', () => adminDataSuite(context))
    describe('sessions', () => sessionsSuite(context))
    describe('task gates', () => gatesSuite(storeGates(context)))
    describe('group counts', () => groupCountsSuite(context))
    describe('flows', () => flowsSuite(context))
    // Before the suites that start managers: those write heartbeats of their own.
    describe('workers registry', () => workersSuite(context))
    describe('cancel anywhere', () => cancelSuite(context, () => target.open()))
    describe('operator pauses', () => pauseSuite(context, () => target.open()))
  })
}
