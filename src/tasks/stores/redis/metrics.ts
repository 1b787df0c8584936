/**
 * Task metrics on Redis (the {@link TaskMetricsStore} port): buckets written by
 * `save-tasks.lua` (see its header for their layout), read here; the live counts come from the
 * per-(function, status) counters.
 */
import type { TaskStatus } from '../../status.js'
import { addToCell, minuteOf } from '../metrics-model.js'
import type { LiveCount, MetricCell, MinuteCell, TaskMetricsStore } from '../ports.js'
import type { RedisOps } from './ops.js'

/** Adds one bucket field (`n\n…` count or `d\n…` duration sum) to `cells`. */
function addField(cells: Map<string, MetricCell>, field: string, value: string): void {
  const [kind, funcName = '', status = '', bin = '0'] = field.split('\n')
  const amount = Number(value)
  if (kind === 'n') addToCell(cells, funcName, status as TaskStatus, Number(bin), amount, 0)
  else if (kind === 'd') addToCell(cells, funcName, status as TaskStatus, Number(bin), 0, amount)
}

function cellsOf(flat: string[]): MetricCell[] {
  const cells = new Map<string, MetricCell>()
  for (let i = 0; i < flat.length; i += 2) addField(cells, flat[i] ?? '', flat[i + 1] ?? '0')
  return [...cells.values()].filter((cell) => cell.count > 0)
}

/** Task metrics on Redis. */
export function redisMetrics(ops: RedisOps): TaskMetricsStore {
  return {
    async read({ since }) {
      const counts = (await ops.call('HGETALL', ops.key('agg:count'))) as string[]
      const live: LiveCount[] = []
      for (let i = 0; i < counts.length; i += 2) {
        const [funcName = '', status = ''] = (counts[i] ?? '').split('\n')
        const count = Number(counts[i + 1])
        if ((status === 'pending' || status === 'running') && count > 0) {
          live.push({ func_name: funcName, status, count })
        }
      }
      const flat =
        since === undefined
          ? ((await ops.call('HGETALL', ops.key('m:total'))) as string[])
          : ((await ops.run('read-metrics', [], [ops.prefix, minuteOf(since), 'sum'])) as string[])
      return { live, cells: cellsOf(flat) }
    },
    async series(since) {
      const flat = (await ops.run(
        'read-metrics',
        [],
        [ops.prefix, minuteOf(since), 'series'],
      )) as string[]
      const minutes = new Map<number, Map<string, MetricCell>>()
      for (let i = 0; i < flat.length; i += 3) {
        const minute = Number(flat[i])
        let cells = minutes.get(minute)
        if (cells === undefined) {
          cells = new Map()
          minutes.set(minute, cells)
        }
        addField(cells, flat[i + 1] ?? '', flat[i + 2] ?? '0')
      }
      const result: MinuteCell[] = []
      for (const [minute, cells] of minutes) {
        for (const cell of cells.values()) if (cell.count > 0) result.push({ minute, ...cell })
      }
      return result
    },
  }
}
