/**
 * docs/errors.md and the two error catalogues, held together in both directions: every coded
 * class is documented with its code and status, every documented row names a class exported by
 * the half's entry point with that code and status, and the JSON body has the documented shape
 * (`{error: {code, message, ...}}`, every extra member named in the row).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as routeControl from '../../src/index.js'
import * as tasks from '../../src/tasks/index.js'
import { CodedError } from '../../src/common/errors.js'
import { requestErrorCatalogue } from '../../src/common/request-errors.js'

interface Row {
  code: string
  className: string
  status: number
  when: string
}

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')

/** The catalogue rows under the heading that starts with `heading`. */
function rowsUnder(heading: string): Row[] {
  const start = doc.indexOf(`\n## ${heading}`)
  expect(start, `docs/errors.md has no "## ${heading}" section`).toBeGreaterThan(-1)
  const next = doc.indexOf('\n## ', start + 1)
  const section = doc.slice(start, next === -1 ? undefined : next)
  const rows: Row[] = []
  for (const line of section.split('\n')) {
    const match = /^\| `([A-Z_]+)` \| `(\w+)` \| (\d{3}) \| (.*) \|$/.exec(line)
    if (match !== null) {
      rows.push({
        code: match[1] ?? '',
        className: match[2] ?? '',
        status: Number(match[3]),
        when: match[4] ?? '',
      })
    }
  }
  return rows
}

type AnyErrorClass = abstract new (...args: never[]) => CodedError

/** An instance of any catalogue class, whatever its constructor takes. */
function sampleOf(ErrorClass: AnyErrorClass): CodedError {
  if (ErrorClass === routeControl.FlagPrerequisiteCycleError) {
    return new routeControl.FlagPrerequisiteCycleError(['a', 'b', 'a'])
  }
  if (ErrorClass === routeControl.RateLimitExceededError) {
    return new routeControl.RateLimitExceededError({
      limit: '10/minute',
      retryAfterSeconds: 3,
      resetAt: new Date(0),
      key: 'rl:route:default:GET:/x:ip:127.0.0.1',
      tier: null,
    })
  }
  return new (ErrorClass as unknown as new (message: string) => CodedError)('a message')
}

const halves = [
  {
    name: 'route control',
    heading: 'Route control',
    entry: routeControl as Record<string, unknown>,
    catalogue: routeControl.errorCatalogue as readonly AnyErrorClass[],
    base: routeControl.SwitchyardError as AnyErrorClass,
  },
  {
    name: 'tasks',
    heading: 'Tasks',
    entry: tasks as Record<string, unknown>,
    catalogue: tasks.taskErrors as readonly AnyErrorClass[],
    base: tasks.TaskError as AnyErrorClass,
  },
]

const shared = requestErrorCatalogue as readonly AnyErrorClass[]
const sharedRows = rowsUnder('Both admin apps')

describe('the errors both admin apps share', () => {
  it('are documented once, exported by both entry points as the same classes, on the shared base', () => {
    expect(sharedRows.map((r) => r.className).sort()).toEqual(shared.map((c) => c.name).sort())
    for (const row of sharedRows) {
      const exported = routeControl[row.className as keyof typeof routeControl]
      expect(exported, row.className).toBe(tasks[row.className as keyof typeof tasks])
      const error = sampleOf(exported as AnyErrorClass)
      expect(error).toBeInstanceOf(CodedError)
      expect(error).not.toBeInstanceOf(routeControl.SwitchyardError)
      expect(error).not.toBeInstanceOf(tasks.TaskError)
      expect([error.code, error.statusCode]).toEqual([row.code, row.status])
    }
  })
})

describe.each(halves)('the $name error catalogue and docs/errors.md', (half) => {
  const ownRows = rowsUnder(half.heading)
  const rows = [...ownRows, ...sharedRows]

  it('documents every class of the catalogue with its code and status', () => {
    expect(half.catalogue.length).toBeGreaterThan(0)
    for (const ErrorClass of half.catalogue) {
      const error = sampleOf(ErrorClass)
      const row = rows.find((r) => r.className === ErrorClass.name)
      expect(row, `docs/errors.md has no row for ${ErrorClass.name}`).toBeDefined()
      expect({ code: row?.code, status: row?.status }, ErrorClass.name).toEqual({
        code: error.code,
        status: error.statusCode,
      })
    }
  })

  it('has a class for every documented row, exported by the entry point, with the same code and status', () => {
    expect(rows.length).toBe(half.catalogue.length)
    for (const row of rows) {
      const exported = half.entry[row.className]
      expect(exported, `${row.className} is not exported`).toBeTypeOf('function')
      expect(half.catalogue, `${row.className} is not in the catalogue`).toContain(exported)
      const error = sampleOf(exported as AnyErrorClass)
      if (!shared.includes(exported as AnyErrorClass)) expect(error).toBeInstanceOf(half.base)
      expect(error).toBeInstanceOf(CodedError)
      expect(error.name).toBe(row.className)
      expect([error.code, error.statusCode]).toEqual([row.code, row.status])
    }
  })

  it('serialises every class to the documented body, naming each extra member in its row', () => {
    for (const row of rows) {
      const error = sampleOf(half.entry[row.className] as AnyErrorClass)
      const body = JSON.parse(JSON.stringify(error)) as { error: Record<string, unknown> }
      expect(body.error.code).toBe(row.code)
      expect(body.error.message).toBe(error.message)
      expect(typeof body.error.message).toBe('string')
      for (const member of Object.keys(body.error)) {
        if (member === 'code' || member === 'message') continue
        expect(row.when, `${row.className}: member "${member}"`).toContain(`\`${member}\``)
      }
    }
  })

  it('names each class in one row only', () => {
    const classes = new Set(rows.map((r) => r.className))
    expect(classes.size).toBe(rows.length)
    expect(ownRows.filter((r) => shared.some((c) => c.name === r.className))).toEqual([])
  })
})
