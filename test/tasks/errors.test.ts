import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { QueueFullError, taskErrorCatalogue, TaskError } from '../../src/tasks/index.js'

const docs = readFileSync(new URL('../../docs/tasks.md', import.meta.url), 'utf8')

describe('task error catalogue', () => {
  it('documents every error class with its code and status in docs/tasks.md', () => {
    for (const ErrorClass of taskErrorCatalogue) {
      const error = new ErrorClass('x')
      expect(error).toBeInstanceOf(TaskError)
      const row = `| \`${error.code}\` | \`${ErrorClass.name}\` | ${error.statusCode} |`
      expect(docs, `docs/tasks.md lacks the row for ${ErrorClass.name}`).toContain(row)
    }
  })

  it('has unique codes per class and the shared JSON body', () => {
    const pairs = taskErrorCatalogue.map((E) => `${new E('x').code}:${E.name}`)
    expect(new Set(pairs).size).toBe(pairs.length)
    const error = new QueueFullError('Queue "q" is full', { queue: 'q' })
    expect(error.name).toBe('QueueFullError')
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      error: { code: 'QUEUE_FULL', message: 'Queue "q" is full', queue: 'q' },
    })
  })
})
