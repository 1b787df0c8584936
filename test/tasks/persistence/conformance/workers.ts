/** Conformance of the workers registry port (heartbeats, recent list, pruning). */
import { expect } from 'vitest'
import { TaskValidationError } from '../../../../src/tasks/errors.js'
import type { StoredWorker } from '../../../../src/tasks/stores/ports.js'
import { T0, type SuiteContext } from './context.js'

/** A heartbeat of instance `id` seen at `lastSeen`. */
function worker(id: string, lastSeen: number, overrides: Partial<StoredWorker> = {}): StoredWorker {
  return {
    id,
    host: 'host-1',
    pid: 4242,
    started_at: T0 - 60_000,
    last_seen: lastSeen,
    queues: ['default', 'emails'],
    running: 1,
    running_tasks: [{ task_id: `task-of-${id}`, func_name: 'work' }],
    version: '1.2.3',
    stopped: false,
    ...overrides,
  }
}

/** Registers the workers-registry suite. */
export function workersSuite({ a, b, test }: SuiteContext): void {
  test('a heartbeat replaces the instance row; every instance reads them, newest first', async () => {
    await a().workers.heartbeat(worker('w-one', T0))
    await b().workers.heartbeat(worker('w-two', T0 + 1000))
    await a().workers.heartbeat(worker('w-one', T0 + 2000, { running: 0, running_tasks: [] }))
    const listed = await b().workers.list(T0 - 10_000, 10)
    expect(listed).toEqual([
      worker('w-one', T0 + 2000, { running: 0, running_tasks: [] }),
      worker('w-two', T0 + 1000),
    ])
    // `since` and `limit` bound the list.
    expect((await a().workers.list(T0 + 1500, 10)).map((w) => w.id)).toEqual(['w-one'])
    expect((await a().workers.list(T0 - 10_000, 1)).map((w) => w.id)).toEqual(['w-one'])
  })

  test('a stopped heartbeat is kept as written', async () => {
    await a().workers.heartbeat(worker('w-stop', T0 + 3000, { stopped: true, running: 0 }))
    const [first] = await b().workers.list(T0 + 3000, 1)
    expect(first?.id).toBe('w-stop')
    expect(first?.stopped).toBe(true)
  })

  test('prune drops rows seen before the cutoff and any beyond the newest `keep`', async () => {
    await a().workers.heartbeat(worker('w-old', T0 - 7_200_000))
    expect(await b().workers.prune(T0 - 3_600_000, 100)).toBe(1)
    expect((await a().workers.list(0, 100)).map((w) => w.id)).toEqual(['w-stop', 'w-one', 'w-two'])
    expect(await a().workers.prune(0, 2)).toBe(1)
    expect((await b().workers.list(0, 100)).map((w) => w.id)).toEqual(['w-stop', 'w-one'])
  })

  test('bad input is refused and changes nothing', async () => {
    await expect(a().workers.heartbeat(worker('', T0))).rejects.toThrow(TaskValidationError)
    await expect(a().workers.heartbeat(worker('w-bad', Number.NaN))).rejects.toThrow(
      TaskValidationError,
    )
    await expect(a().workers.list(T0, 0)).rejects.toThrow(TaskValidationError)
    await expect(a().workers.prune(T0, 5000)).rejects.toThrow(TaskValidationError)
    expect((await b().workers.list(0, 100)).map((w) => w.id)).toEqual(['w-stop', 'w-one'])
  })
}
