/**
 * The PostgreSQL sections against reads that cross a change on the way: a reload whose read
 * was sent before another instance's write must not roll that write back, and a record name
 * PostgreSQL cannot take as text (rate-limit routes are keyed `service\0route`) is read with
 * its whole section. The connection is a stand-in whose answers the test releases one by one,
 * so each interleaving happens every time.
 */
import { describe, expect, it } from 'vitest'
import type { PostgresConnection } from '../../src/stores/postgres/connection.js'
import { postgresSections } from '../../src/stores/postgres/sections.js'

interface Row {
  name?: string
  key?: string
  record?: string | null
  value?: string
  version?: string
}

interface Pending {
  text: string
  params: readonly unknown[]
  answer(rows: Row[]): void
}

/** A connection whose queries wait until the test answers them. */
function heldConnection() {
  const pending: Pending[] = []
  const connection = {
    channel: 'sy_changes',
    query(text: string, params: readonly unknown[] = []) {
      return new Promise<{ rows: Row[] }>((resolve) => {
        pending.push({ text, params, answer: (rows) => resolve({ rows }) })
      })
    },
  } as unknown as PostgresConnection
  /** The oldest unanswered query whose text contains `marker` (waits for it to be sent). */
  async function next(marker: string): Promise<Pending> {
    for (let turn = 0; turn < 1000; turn++) {
      const index = pending.findIndex((query) => query.text.includes(marker))
      if (index !== -1) return pending.splice(index, 1)[0]!
      await new Promise((resolve) => setImmediate(resolve))
    }
    throw new Error(`no query containing ${marker}`)
  }
  /** Answers the oldest unanswered query containing `marker`. */
  async function answer(marker: string, rows: Row[]): Promise<void> {
    const query = await next(marker)
    query.answer(rows)
  }
  return { connection, next, answer, pending }
}

const LOAD_ALL = 'SELECT name, value, version FROM'
const RECORDS = 'unnest'
const ONE_SECTION = 'WHERE name = $1'

function sectionsOn(connection: PostgresConnection) {
  const told: string[] = []
  const sections = postgresSections(
    connection,
    'sy_',
    () => '',
    (error) => {
      throw error
    },
  )
  sections.onChange((name, keys) => told.push(`${name}:${keys === undefined ? '*' : keys.join()}`))
  return { sections, told }
}

describe('PostgreSQL sections and reads that cross a change', () => {
  it('reads a section again when a reload sent before a change lands while the change is applied', async () => {
    const { connection, next, answer } = heldConnection()
    const { sections, told } = sectionsOn(connection)
    // Another instance stored `rl_global` for the first time (version 1) …
    const change = sections.changed('rl_global', 1, ['policy'])
    const records = await next(RECORDS)
    // … while a reload that read the table before that write is on its way.
    const reload = sections.loadAll()
    await answer(LOAD_ALL, [])
    await reload
    records.answer([{ key: 'policy', record: '{"limit":"100/minute"}' }])
    // The records' read was overtaken by the reload, which did not hold version 1: read whole.
    const whole = await next(ONE_SECTION)
    expect(whole.params).toEqual(['rl_global'])
    whole.answer([{ value: '{"policy":{"limit":"100/minute"}}', version: '1' }])
    await change
    expect(sections.read('rl_global')).toEqual({ policy: { limit: '100/minute' } })
    expect(told).toEqual(['rl_global:*', 'rl_global:*'])
  })

  it('keeps a change applied here when a reload that read the table before it answers later', async () => {
    const { connection, next, answer } = heldConnection()
    const { sections } = sectionsOn(connection)
    const reload = sections.loadAll()
    const stale = await next(LOAD_ALL)
    const change = sections.changed('flags', 1, ['checkout'])
    await answer(RECORDS, [{ key: 'checkout', record: '{"on":true}' }])
    await change
    expect(sections.read('flags')).toEqual({ checkout: { on: true } })
    // The reload's read predates version 1 (no `flags` row yet): it brings another section
    // and leaves `flags` as it is held.
    stale.answer([{ name: 'other', value: '{"a":1}', version: '3' }])
    await reload
    expect(sections.read('flags')).toEqual({ checkout: { on: true } })
    expect(sections.read('other')).toEqual({ a: 1 })
    // The next change follows on from version 1 and is applied by its records.
    const later = sections.changed('flags', 2, ['beta'])
    await answer(RECORDS, [{ key: 'beta', record: '{"on":false}' }])
    await later
    expect(sections.read('flags')).toEqual({ checkout: { on: true }, beta: { on: false } })
  })

  it('reads the whole section for a record name with NUL, which PostgreSQL text cannot hold', async () => {
    const { connection, next, pending } = heldConnection()
    const { sections, told } = sectionsOn(connection)
    const key = 'default\u0000GET:/x'
    const change = sections.changed('rl_routes', 1, [key])
    const whole = await next(ONE_SECTION)
    expect(pending).toHaveLength(0) // no read of the records by name was sent
    whole.answer([{ value: JSON.stringify({ [key]: { limit: '1/minute' } }), version: '1' }])
    await change
    expect(sections.record('rl_routes', key)).toEqual({ limit: '1/minute' })
    expect(told).toEqual(['rl_routes:*'])
  })

  it('announces a write that changes a NUL-named record as the whole section', async () => {
    const { connection, answer } = heldConnection()
    const announced: (readonly string[] | undefined)[] = []
    const sections = postgresSections(
      connection,
      'sy_',
      (_name, keys) => {
        announced.push(keys)
        return ''
      },
      () => undefined,
    )
    const write = sections.write('rl_routes', { 'default\u0000GET:/x': { limit: '1/minute' } })
    await answer('INSERT INTO', [{ version: '1' }])
    await write
    const named = sections.write('flags', { checkout: true })
    await answer('INSERT INTO', [{ version: '1' }])
    await named
    expect(announced).toEqual([undefined, ['checkout']])
  })
})
