/**
 * A stored task's JSON body leaves out the record's and the task's null fields, and reading it
 * gives them back as null; the user's own data (arguments, tags, results) is kept exactly. The
 * API shows a record's fields in one order, whatever order its store read them in.
 */
import { describe, expect, it } from 'vitest'
import { serializeTask } from '../../../src/tasks/admin/serialize.js'
import { isoToMs, parseTask, taskBody, taskColumns } from '../../../src/tasks/stores/rows.js'
import { makeTask } from '../persistence/helpers.js'

describe('task bodies', () => {
  it('leave out the null fields of the record and the task, and read them back as null', () => {
    const task = makeTask({ func_name: 'resize', tags: { tenant: 'acme' } })
    task.args = [null, { keep: null, nested: [null] }]
    task.result = null
    const body = taskBody(task)
    const stored = JSON.parse(body) as { record: Record<string, unknown> } & Record<string, unknown>
    for (const field of ['start_time', 'end_time', 'error', 'priority', 'retry_of', 'parent_id']) {
      expect(Object.hasOwn(stored.record, field), field).toBe(false)
    }
    expect(Object.hasOwn(stored, 'encrypted_args')).toBe(false)
    expect(Object.hasOwn(stored, 'idempotency_key')).toBe(false)
    // Only those: the user's nulls stay, and so does a null optional field outside the lists.
    expect(stored.args).toEqual([null, { keep: null, nested: [null] }])
    expect(stored.result).toBeNull()
    expect(body.length).toBeLessThan(JSON.stringify(task).length * 0.75)
    expect(taskColumns(task).body).toBe(body)
    expect(parseTask(body)).toEqual(task)
  })

  it('keep every field that is set', () => {
    const task = makeTask({
      func_name: 'resize',
      status: 'failed',
      start_time: '2026-11-21T12:00:01+00:00',
      end_time: '2026-11-21T12:00:02+00:00',
      error: 'Error: boom',
      priority: 0,
      progress: 0,
      retry_of: 'earlier-run',
    })
    task.args = null
    task.encrypted_args = 'v1:sealed'
    task.idempotency_key = 'order-7'
    const parsed = parseTask(taskBody(task))
    expect(parsed).toEqual(task)
    expect(parsed.record.priority).toBe(0)
    expect(parsed.record.progress).toBe(0)
  })

  it('read bodies written in full, as earlier releases did', () => {
    const task = makeTask({ func_name: 'resize' })
    expect(parseTask(JSON.stringify(task))).toEqual(task)
  })

  it('come out of the API in one field order', () => {
    const task = makeTask({ func_name: 'resize', tags: { tenant: 'acme' } })
    const fromStore = serializeTask(parseTask(taskBody(task)), true)
    const fromMemory = serializeTask(task, true)
    expect(Object.keys(fromStore)).toEqual(Object.keys(fromMemory))
    expect(Object.keys(fromStore).slice(0, 5)).toEqual([
      'task_id',
      'func_name',
      'status',
      'created_at',
      'start_time',
    ])
    expect(Object.keys(fromStore).at(-1)).toBe('args')
    expect(fromStore).toEqual(fromMemory)
  })
})

describe('isoToMs', () => {
  it('reuses its last two results without mixing them up, and still refuses a bad timestamp', () => {
    const created = '2026-11-29T10:00:00.000+00:00'
    const ended = '2026-11-29T10:00:01.500+00:00'
    const other = '2026-11-30T00:00:00.001+00:00'
    const parsed = [created, ended, created, ended, other, created, ended, other].map((iso) =>
      isoToMs(iso, 'created_at'),
    )
    expect(parsed).toEqual(
      [created, ended, created, ended, other, created, ended, other].map((iso) => Date.parse(iso)),
    )
    expect(() => isoToMs('yesterday', 'end_time')).toThrow(/end_time is not a timestamp/)
    expect(isoToMs(other, 'created_at')).toBe(Date.parse(other))
  })
})
