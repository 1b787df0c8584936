/**
 * save-flow.lua and create-task.lua write their records with save-tasks.lua's own text, put
 * in place of a marker when the scripts load. The text must arrive byte for byte: save-tasks'
 * string patterns hold `$`, which a plain string replacement would read as `$'` (the text after
 * the marker) and the like.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { loadScripts } from '../../../src/tasks/stores/redis/scripts.js'

const lua = (name: string) =>
  readFile(new URL(`../../../src/tasks/stores/redis/lua/${name}.lua`, import.meta.url), 'utf8')

describe('Redis store scripts', () => {
  it('include save-tasks.lua verbatim in create-task.lua and save-flow.lua', async () => {
    const scripts = await loadScripts()
    const saveTasks = await lua('save-tasks')
    expect(saveTasks).toContain("$')")
    const createTask = await lua('create-task')
    const [before, after] = createTask.split('--@save-tasks')
    expect(scripts.get('create-task')?.text).toBe(`${before}${saveTasks}${after}`)
    const saveFlow = scripts.get('save-flow')?.text ?? ''
    // The one change: a flow node's fields replace save-tasks' empty extra fields.
    const asIncluded = saveTasks.replace('local extraFields = {}', 'local extraFields = nodeFields')
    expect(saveFlow).toContain(asIncluded)
    expect(saveFlow).not.toContain('--@save-tasks')
    expect(saveFlow.split(asIncluded)).toHaveLength(2)
  })
})
