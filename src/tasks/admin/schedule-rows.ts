/**
 * The periodic schedules as the task admin shows them (API and dashboard): trigger, whether an
 * operator paused it, next run and the last run (scheduled, or run now by an operator) with its
 * time and status, plus how many one-off runs are armed.
 */
import type { TaskManager } from '../manager.js'
import type { TaskStatus } from '../status.js'

/** One periodic schedule with its last run. */
export interface ScheduleRow {
  name: string
  trigger: string
  /** Epoch ms, or null when the trigger never fires again. */
  next_run: number | null
  /** Paused by an operator: no slot fires on any instance. */
  paused: boolean
  /** When the last run was enqueued (its record's `created_at`), or null. */
  last_run_at: string | null
  last_status: TaskStatus | null
  last_task_id: string | null
}

/**
 * Every periodic schedule (or only the one called `only`) with its last run, and the count of
 * armed one-off runs.
 */
export async function scheduleRows(
  manager: TaskManager,
  only?: string,
): Promise<{ schedules: ScheduleRow[]; oneOffArmed: number }> {
  const listed = manager.listSchedules()
  const chosen = only === undefined ? listed : listed.filter((schedule) => schedule.name === only)
  const schedules = await Promise.all(
    chosen.map(async (schedule) => {
      const recent = await manager.listTasks({ funcName: schedule.name, perPage: 1 })
      // Its function's newest record: a scheduled run, a run now, or a retry of either.
      const last = recent.items[0] ?? null
      return {
        name: schedule.name,
        trigger: schedule.trigger,
        next_run: schedule.next_run,
        paused: schedule.paused,
        last_run_at: last?.created_at ?? null,
        last_status: last?.status ?? null,
        last_task_id: last?.task_id ?? null,
      }
    }),
  )
  return { schedules, oneOffArmed: await manager.countScheduled() }
}
