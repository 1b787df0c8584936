/**
 * fast-check arbitraries from a route's JSON schema (what Fastify validates the request with):
 * values that fit the schema, values that almost fit (one field of the wrong type, a bound
 * crossed, a field too many) and hostile ones (huge strings, deep nesting, `__proto__` keys,
 * unicode, any JSON at all).
 */
import fc from 'fast-check'

/** The subset of JSON Schema the admins' route schemas use. */
export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  maxItems?: number
  additionalProperties?: boolean | JsonSchema
}

const DEPTH_LIMIT = 4

/** Values that fit `schema` (as far as this subset goes). */
export function validValue(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || depth > DEPTH_LIMIT) return fc.jsonValue({ maxDepth: 2 })
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives !== undefined && alternatives.length > 0)
    return fc.oneof(...alternatives.map((each) => validValue(each, depth + 1)))
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string':
      return fc.string({
        minLength: schema.minLength ?? 0,
        maxLength: Math.min(schema.maxLength ?? 40, 40),
      })
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1_000_000 })
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
      })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(validValue(schema.items, depth + 1), {
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      })
    case 'object':
    case undefined: {
      const properties = schema.properties ?? {}
      const required = new Set(schema.required ?? [])
      const shape: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, property] of Object.entries(properties))
        shape[name] = validValue(property, depth + 1)
      if (Object.keys(shape).length === 0)
        return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), {
          maxKeys: 3,
        })
      return fc.record(shape, {
        requiredKeys: Object.keys(shape).filter((name) => required.has(name)),
      })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** A value of some other JSON type than `schema` wants. */
function wrongType(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.boolean(),
    fc.string({ maxLength: 10 }),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.constant({}),
  )
}

/** A valid value with one thing wrong: a field's type, a bound, an extra field. */
export function almostValid(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const names = Object.keys(schema?.properties ?? {})
  return fc.oneof(
    wrongType(),
    validValue(schema).chain((value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || names.length === 0)
        return fc.constant(value)
      return fc
        .tuple(fc.constantFrom(...names), wrongType(), fc.constantFrom('type', 'extra', 'drop'))
        .map(([name, wrong, how]) => {
          const entries = Object.entries(value as Record<string, unknown>)
          if (how === 'drop') return Object.fromEntries(entries.filter(([key]) => key !== name))
          return Object.fromEntries([
            ...entries,
            [how === 'type' ? name : `${name}_unknown`, wrong],
          ])
        })
    }),
    validValue(schema).map((value) => boundCrossed(value)),
  )
}

function boundCrossed(value: unknown): unknown {
  if (typeof value === 'string') return value + 'x'.repeat(5000)
  if (typeof value === 'number') return value * -1e12
  return value
}

/** Nested arrays or objects `depth` levels deep. */
function nested(depth: number, object: boolean): unknown {
  let value: unknown = 'leaf'
  for (let i = 0; i < depth; i++) value = object ? { a: value } : [value]
  return value
}

/** Hostile values: huge strings, deep nesting, prototype keys, unicode, any JSON. */
export function hostile(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant('x'.repeat(200_000)),
    fc
      .integer({ min: 20, max: 400 })
      .chain((depth) => fc.boolean().map((object) => nested(depth, object))),
    fc.constant(
      JSON.parse(
        '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}',
      ),
    ),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.jsonValue({ maxDepth: 4 }),
    fc.constantFrom(
      Number.MAX_SAFE_INTEGER,
      -0,
      1e308,
      '',
      ' ',
      '\u0000',
      '../../etc/passwd',
      '%00',
      '<script>',
    ),
  )
}

/** Any of the three kinds, for one part of a request. */
export function fuzzValue(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: validValue(schema), weight: 3 },
    { arbitrary: almostValid(schema), weight: 3 },
    { arbitrary: hostile(), weight: 2 },
  )
}
