/**
 * Unknown option names are refused everywhere options are taken, with the list of known ones,
 * and nothing is registered or changed.
 */
import Fastify from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { switchyard } from '../../src/fastify/index.js'
import { TaskManager, TaskValidationError } from '../../src/tasks/index.js'
import { tasksPlugin } from '../../src/tasks/fastify/index.js'

const managers: TaskManager[] = []
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.shutdown()))
})

function newManager(): TaskManager {
  const manager = new TaskManager()
  managers.push(manager)
  return manager
}

describe('unknown option names', () => {
  it('manager.task refuses them and registers nothing', () => {
    const manager = newManager()
    const define = () =>
      manager.task({ name: 'resize', retires: 3 } as unknown as { name: string }, () => 1)
    expect(define).toThrow(TaskValidationError)
    expect(define).toThrow(/Unknown task option "retires"\. Known options: name, retries,/)
    expect(manager.getRegisteredTask('resize')).toBeUndefined()
  })

  it('addTask refuses them and queues nothing', async () => {
    const manager = newManager()
    const task = manager.task({ name: 'noop' }, () => 1)
    await expect(
      manager.addTask(task, [], { tag: { a: 'b' } } as unknown as { tags: Record<string, string> }),
    ).rejects.toThrow(/Unknown addTask option "tag"\. Known options: tags,/)
    expect((await manager.listTasks()).total).toBe(0)
  })

  it('new TaskManager refuses them, naming every unknown one', () => {
    expect(
      () => new TaskManager({ maxsize: 5, bogus: 1 } as unknown as { maxSize: number }),
    ).toThrow(/Unknown TaskManager options "maxsize", "bogus"\. Known options: queues, maxSize,/)
  })

  it('the tasks plugin and the switchyard plugin refuse them at registration', async () => {
    const manager = newManager()
    const tasksApp = Fastify()
    await expect(
      tasksApp.register(tasksPlugin, { taskManager: manager, autoinstall: false } as never).ready(),
    ).rejects.toThrow(
      /Unknown tasksPlugin option "autoinstall"\. Known options: taskManager, autoInstall, closeManager\./,
    )
    await tasksApp.close()

    const app = Fastify()
    const registering = app.register(switchyard, { ratelimit: {} } as never).ready()
    await expect(registering).rejects.toBeInstanceOf(ConfigError)
    await expect(registering).rejects.toThrow(/Unknown switchyard plugin option "ratelimit"/)
    await app.close()
  })

  it('accepts every known name and the encapsulation options Fastify passes', async () => {
    const manager = newManager()
    expect(() => manager.task({ name: 'ok', retries: 1, queue: 'default' }, () => 1)).not.toThrow()
    const app = Fastify()
    await app.register(tasksPlugin, { taskManager: manager, prefix: '/x' } as never)
    await app.ready()
    await app.close()
  })
})
