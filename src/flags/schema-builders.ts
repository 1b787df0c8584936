/**
 * The few TypeBox builders the flag schemas use (`Type.Object`, `Type.String`, …), rebuilt as
 * plain functions with TypeBox's own signatures.
 *
 * Why: the flag schemas are exported by `fastify-switchyard`, so they are built whenever the
 * package is imported, and loading TypeBox itself (hundreds of modules) cost more than the whole
 * rest of the engine's import. These builders return the same objects TypeBox returns: the same
 * enumerable keys in the same order and the same hidden (non-enumerable) `~kind` / `~optional`
 * markers, so TypeBox's compiler and `Static` treat them exactly as its own (a test compares
 * every flag schema with the one TypeBox builds). TypeBox loads with the first flag write or the
 * admin app, as before.
 */
import type { Type as TypeBox } from 'typebox'

/** The TypeBox builders the flag schemas need, with TypeBox's types. */
export type SchemaBuilders = Pick<
  typeof TypeBox,
  | 'Array'
  | 'Boolean'
  | 'Enum'
  | 'Integer'
  | 'Literal'
  | 'Null'
  | 'Number'
  | 'Object'
  | 'Optional'
  | 'Record'
  | 'String'
  | 'Union'
  | 'Unknown'
>

type Json = Record<string, unknown>

/** Adds TypeBox's hidden markers (non-enumerable, writable, configurable) to `target`. */
function hide(target: Json, hidden: Json): Json {
  for (const key of Object.keys(hidden))
    Object.defineProperty(target, key, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: hidden[key],
    })
  return target
}

/** TypeBox's `Memory.Create`: enumerable fields, then the options, then the hidden kind. */
const create = (kind: string, fields: Json, options: Json = {}): Json =>
  hide({ ...fields, ...options }, { '~kind': kind })

/** The JSON type name of a literal, as TypeBox writes it. */
function literalType(value: unknown): string {
  if (typeof value === 'bigint') return 'bigint'
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'number') return 'number'
  return 'string'
}

const builders = {
  Array: (items: Json, options?: Json) => create('Array', { type: 'array', items }, options),
  Boolean: (options?: Json) => create('Boolean', { type: 'boolean' }, options),
  Enum: (values: readonly unknown[], options?: Json) => create('Enum', { enum: values }, options),
  Integer: (options?: Json) => create('Integer', { type: 'integer' }, options),
  Literal: (value: unknown, options?: Json) =>
    create('Literal', { type: literalType(value), const: value }, options),
  Null: (options?: Json) => create('Null', { type: 'null' }, options),
  Number: (options?: Json) => create('Number', { type: 'number' }, options),
  Object: (properties: Record<string, Json>, options?: Json) => {
    const required = Object.keys(properties).filter(
      (key) => !Object.hasOwn(properties[key] as Json, '~optional'),
    )
    return create(
      'Object',
      { type: 'object', ...(required.length > 0 ? { required } : {}), properties },
      options,
    )
  },
  // A copy of the type with every own property as it was, plus the hidden `~optional` marker.
  Optional: (type: Json) => {
    const copy: Json = {}
    for (const key of Reflect.ownKeys(type))
      Object.defineProperty(
        copy,
        key,
        Object.getOwnPropertyDescriptor(type, key) as PropertyDescriptor,
      )
    return hide(copy, { '~optional': true })
  },
  // Only string keys are used: TypeBox writes them as the catch-all pattern, with the options
  // after the hidden kind (its record builder updates a finished record).
  Record: (_key: Json, value: Json, options: Json = {}) =>
    Object.assign(
      create('Record', { type: 'object', patternProperties: { '^.*$': value } }),
      options,
    ),
  String: (options?: Json) => create('String', { type: 'string' }, options),
  Union: (anyOf: Json[], options?: Json) => create('Union', { anyOf }, options),
  Unknown: (options?: Json) => create('Unknown', {}, options),
}

/** Drop-in for `Type` of TypeBox, limited to the builders above (same results, same types). */
export const Type = builders as unknown as SchemaBuilders
