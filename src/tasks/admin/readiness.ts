/** The readiness checks of a task manager: started, and its store answers. */
import type { TaskManager } from '../manager.js'
import { Readiness, safeDetail } from '../../common/health-checks.js'

/** `manager` (started, not shutting down) and `store` (one cheap read of the durable store). */
export function taskReadiness(manager: TaskManager): Readiness {
  const readiness = new Readiness()
  readiness.add({
    name: 'manager',
    critical: () => true,
    run: () =>
      manager.running
        ? { status: 'ok' }
        : { status: 'failing', detail: 'the task manager is not started or is shutting down' },
  })
  readiness.add({
    name: 'store',
    critical: () => true,
    run: async () => {
      try {
        // A count of the scheduled one-offs: one small query on any durable backend.
        await manager.countScheduled()
        return { status: 'ok' }
      } catch (error) {
        return { status: 'failing', detail: safeDetail(error) }
      }
    },
  })
  return readiness
}
