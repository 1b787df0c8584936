/**
 * The periodic schedules as the task admin shows them (API and dashboard): trigger, next run
 * and the status of the last scheduled run, plus how many one-off runs are armed.
 */
import type { TaskManager } from '../manager.js'
import type { TaskStatus } from '../status.js'

/** One periodic schedule with its last scheduled run. */
export interface ScheduleRow {
  name: string
  trigger: string
  /** Epoch ms, or null when the trigger never fires again. */
  next_run: number | null
  last_status: TaskStatus | null
  last_task_id: string | null
}

/** Every periodic schedule with its last run, and the count of armed one-off runs. */
export async function scheduleRows(
  manager: TaskManager,
): Promise<{ schedules: ScheduleRow[]; oneOffArmed: number }> {
  const schedules = await Promise.all(
    manager.listSchedules().map(async (schedule) => {
      const recent = await manager.listTasks({ funcName: schedule.name, perPage: 10 })
      const last = recent.items.find((record) => record.source === 'scheduled') ?? null
      return {
        name: schedule.name,
        trigger: schedule.trigger,
        next_run: schedule.next_run,
        last_status: last?.status ?? null,
        last_task_id: last?.task_id ?? null,
      }
    }),
  )
  return { schedules, oneOffArmed: await manager.countScheduled() }
}
