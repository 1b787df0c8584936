/**
 * Bad input to the task admin: every malformed query, parameter and body answers 400 (or 415
 * for a body that is not JSON) with the JSON error shape, never a 5xx, and changes nothing.
 */
import { describe, expect, it } from 'vitest'
import { waitForStatus } from '../helpers.js'
import { adminApp } from './helpers.js'

/** A bad request; its error code is `VALIDATION_ERROR` unless given. */
interface BadInput {
  method?: string
  url: string
  payload?: unknown
  type?: string
  code?: string
}

describe('task admin bad input', () => {
  it('answers 400 with the error shape and leaves the state as it was', async () => {
    const { app, manager } = await adminApp(
      {},
      { queues: { mail: { concurrency: 2, maxSize: 5 } } },
    )
    const job = manager.task({ name: 'job' }, () => {
      throw new Error('boom')
    })
    const failed = await manager.addTask(job, [])
    await waitForStatus(manager, failed)
    const snapshot = async () => ({
      tasks: (await app.inject('/tasks')).json<unknown>(),
      queues: manager.queueStats(),
      audit: (await app.inject('/tasks/audit')).json<unknown>(),
      metrics: (await app.inject('/tasks/metrics')).json<unknown>(),
    })
    const before = await snapshot()
    const bad: BadInput[] = [
      { url: '/tasks?status=exploded' },
      { url: '/tasks?page=-1' },
      { url: '/tasks?page=abc' },
      { url: '/tasks?per_page=0' },
      { url: '/tasks?per_page=501' },
      { url: '/tasks?since=2x' },
      { url: '/tasks?since=0h' },
      { url: '/tasks?tag=novalue' },
      { url: `/tasks?q=${'x'.repeat(300)}` },
      { url: '/tasks?bogus=1' },
      { url: '/tasks/bad%20id' },
      { url: '/tasks/a$b' },
      { url: '/tasks/%E2%9C%93' },
      { method: 'POST', url: '/tasks/bad%20id/retry' },
      { method: 'POST', url: '/tasks/bad%20id/cancel' },
      { url: '/tasks/audit?per_page=0' },
      { url: '/tasks/metrics?since=yesterday' },
      { url: '/tasks/metrics?since=' },
      { method: 'POST', url: '/tasks/bulk-retry', payload: { task_ids: failed } },
      { method: 'POST', url: '/tasks/bulk-retry', payload: [failed] },
      { method: 'POST', url: '/tasks/bulk-retry', payload: {}, code: 'BULK_TARGET_INVALID' },
      { method: 'POST', url: '/tasks/bulk-retry', payload: { task_ids: [] } },
      { method: 'POST', url: '/tasks/bulk-retry', payload: { task_ids: [42] } },
      { method: 'POST', url: '/tasks/bulk-retry', payload: { task_ids: [failed], extra: 1 } },
      {
        method: 'POST',
        url: '/tasks/bulk-retry',
        payload: '{"task_ids": [',
        type: 'application/json',
      },
      { method: 'POST', url: '/tasks/retry-failed?since=forever' },
      { method: 'POST', url: '/tasks/retry-failed?func_name=' },
      { method: 'DELETE', url: '/tasks/history?value=1&unit=week' },
      { method: 'DELETE', url: '/tasks/history?value=-1&unit=day' },
      { method: 'DELETE', url: '/tasks/history?unit=day' },
      { method: 'DELETE', url: '/tasks/history?value=x&unit=day' },
      { method: 'DELETE', url: '/tasks/history' },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: { concurrency: 'two' } },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: { concurrency: 0 } },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: { concurrency: 1.5 } },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: { max_size: -1 } },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: { maxSize: 3 } },
      { method: 'PATCH', url: '/tasks/queues/mail', payload: [1] },
    ]
    for (const input of bad) {
      const response = await app.inject({
        method: (input.method ?? 'GET') as 'GET',
        url: input.url,
        payload: input.payload as never,
        headers: input.type === undefined ? {} : { 'content-type': input.type },
      })
      expect(response.statusCode, `${input.method ?? 'GET'} ${input.url}`).toBe(400)
      const body = response.json<{ error: { code: string; message: string } }>()
      expect(body.error.code, input.url).toBe(input.code ?? 'VALIDATION_ERROR')
      expect(typeof body.error.message).toBe('string')
    }
    const notJson = await app.inject({
      method: 'PATCH',
      url: '/tasks/queues/mail',
      payload: '<concurrency>3</concurrency>',
      headers: { 'content-type': 'application/xml' },
    })
    expect(notJson.statusCode).toBe(415)
    expect(notJson.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } })
    expect(await snapshot()).toEqual(before)
    await app.close()
  })
})
