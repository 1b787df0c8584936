import { Type as TypeBox } from 'typebox'
import { Compile } from 'typebox/compile'
import { describe, expect, it, vi } from 'vitest'
import * as light from '../../src/flags/schemas.js'
import { Type } from '../../src/flags/schema-builders.js'

/**
 * Every own property (hidden ones included), in order, with its enumerability: two schemas
 * print the same only when TypeBox could not tell them apart.
 */
function anatomy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(anatomy)
  return Reflect.ownKeys(value).map((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor
    return [String(key), descriptor.enumerable, descriptor.writable, anatomy(descriptor.value)]
  })
}

/** The flag schemas module built with TypeBox's own builders. */
async function builtByTypeBox(): Promise<Record<string, unknown>> {
  vi.resetModules()
  vi.doMock('../../src/flags/schema-builders.js', () => ({ Type: TypeBox }))
  try {
    return await import('../../src/flags/schemas.js')
  } finally {
    vi.doUnmock('../../src/flags/schema-builders.js')
    vi.resetModules()
  }
}

describe('flag schema builders', () => {
  it('build every flag schema exactly as TypeBox does (keys, order, hidden markers)', async () => {
    const reference = await builtByTypeBox()
    const names = Object.keys(light).sort()
    expect(names).toEqual(Object.keys(reference).sort())
    expect(names.length).toBeGreaterThanOrEqual(10)
    for (const name of names) {
      expect(reference[name]).not.toBe((light as Record<string, unknown>)[name])
      expect(anatomy((light as Record<string, unknown>)[name]), name).toEqual(
        anatomy(reference[name]),
      )
    }
  })

  it('match TypeBox builder by builder, options included', () => {
    const pairs: [unknown, unknown][] = [
      [Type.String({ pattern: '^a' }), TypeBox.String({ pattern: '^a' })],
      [Type.Integer({ minimum: 0 }), TypeBox.Integer({ minimum: 0 })],
      [Type.Literal(3), TypeBox.Literal(3)],
      [Type.Literal(true), TypeBox.Literal(true)],
      [Type.Enum(['a', 'b']), TypeBox.Enum(['a', 'b'])],
      [
        Type.Record(Type.String(), Type.Number(), { maxProperties: 2 }),
        TypeBox.Record(TypeBox.String(), TypeBox.Number(), { maxProperties: 2 }),
      ],
      [
        Type.Object({ a: Type.Optional(Type.Null()) }, { description: 'd' }),
        TypeBox.Object({ a: TypeBox.Optional(TypeBox.Null()) }, { description: 'd' }),
      ],
    ]
    for (const [mine, theirs] of pairs) expect(anatomy(mine)).toEqual(anatomy(theirs))
  })

  it("compile with TypeBox's compiler and reject what the TypeBox-built schema rejects", () => {
    const check = Compile(light.SegmentInputSchema)
    expect(check.Check({ key: 'beta', name: 'Beta', rules: [] })).toBe(true)
    expect(check.Check({ key: 'beta', name: '' })).toBe(false)
    expect(check.Check({ key: 'beta', name: 'Beta', extra: 1 })).toBe(false)
    expect(check.Check({ name: 'Beta' })).toBe(false)
  })
})
