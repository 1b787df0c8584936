/**
 * What a run returned, kept with its record and shown on the task's page only with
 * `displayResults` (a hint naming the option otherwise, as for `displayFuncArgs`): async and
 * thread executors, long values cut with a "show all" disclosure, values JSON cannot carry and
 * runs with encrypted arguments keep nothing.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { generateEncryptionKey, TaskManager } from '../../../src/tasks/index.js'
import { MAX_RESULT_CHARS } from '../../../src/tasks/result.js'
import { fib } from '../fixtures/worker-tasks.js'
import { quietLogger, waitForStatus } from '../helpers.js'
import { adminApp } from './helpers.js'

let app: FastifyInstance | null = null
afterEach(async () => {
  await app?.close()
  app = null
})

/** An open task admin with the given display options; functions that return what they get. */
async function mounted(options: { displayResults?: boolean; displayFuncArgs?: boolean } = {}) {
  const manager = new TaskManager({ logger: quietLogger })
  const echo = manager.task({ name: 'echo' }, (value: unknown) => value)
  const done = await adminApp(options, {}, manager)
  app = done.app
  const page = async (id: string) =>
    (await done.app.inject({ url: `/tasks/dashboard/task/${id}` })).body
  const run = async (value: unknown) => {
    const id = await manager.addTask(echo, [value])
    await waitForStatus(manager, id)
    return id
  }
  return { manager, page, run }
}

describe('run results', () => {
  it('are kept as JSON text, cut at the limit; nothing for undefined or what JSON cannot carry', async () => {
    const { manager, run } = await mounted()
    const stored = async (value: unknown) => manager.getStoredTask(await run(value))
    expect(await stored({ sent: 3 })).toMatchObject({ result: '{"sent":3}' })
    expect((await stored(undefined))?.result).toBeUndefined()
    expect((await stored(10n))?.result).toBeUndefined()
    const long = await stored('x'.repeat(MAX_RESULT_CHARS + 10))
    expect(long?.result).toHaveLength(MAX_RESULT_CHARS)
    expect(long?.result_truncated).toBe(true)
  })

  it('come back from a thread worker', async () => {
    const manager = new TaskManager({ logger: quietLogger })
    const module = new URL('../fixtures/worker-tasks.ts', import.meta.url).href
    const task = manager.task({ name: 'fib', executor: 'thread', module }, fib)
    try {
      const id = await manager.addTask(task, [10])
      expect((await waitForStatus(manager, id)).status).toBe('success')
      expect((await manager.getStoredTask(id))?.result).toBe('55')
    } finally {
      await manager.shutdown()
    }
  })

  it('are not kept for a run with encrypted arguments', async () => {
    const manager = new TaskManager({ logger: quietLogger, encryptionKey: generateEncryptionKey() })
    const echo = manager.task({ name: 'echo' }, (value: unknown) => value)
    const done = await adminApp({ displayResults: true, displayFuncArgs: true }, {}, manager)
    app = done.app
    const id = await manager.addTask(echo, ['secret'])
    await waitForStatus(manager, id)
    expect((await manager.getStoredTask(id))?.result).toBeUndefined()
    const body = (await done.app.inject({ url: `/tasks/dashboard/task/${id}` })).body
    expect(body).toContain('Not recorded: the arguments are encrypted.')
    expect(body).toMatch(/<dd><span class="muted">encrypted<\/span><\/dd>/)
    expect(body).not.toContain('secret')
  })

  it('show on the page only with displayResults; a hint names each option while hidden', async () => {
    const hidden = await mounted()
    const id = await hidden.run({ marker: 'r35ult' })
    const body = await hidden.page(id)
    expect(body).not.toContain('r35ult')
    expect(body).toContain('set <code>displayResults</code> to show it')
    expect(body).toContain('set <code>displayFuncArgs</code> to show them')
    await app?.close()

    const shown = await mounted({ displayResults: true, displayFuncArgs: true })
    const short = await shown.page(await shown.run({ marker: '<b>r35ult</b>' }))
    expect(short).toContain('{&#34;marker&#34;:&#34;&lt;b>r35ult&lt;/b>&#34;}')
    expect(short).not.toContain('<b>r35ult</b>')
    expect(short).not.toContain('displayResults')
    const long = await shown.page(await shown.run('y'.repeat(1000)))
    expect(long).toMatch(/<details class="long-value"><summary>.*show all<\/span><\/summary>/s)
    expect(long).toContain(`<pre class="mono">&#34;${'y'.repeat(1000)}&#34;</pre>`)
  })
})
