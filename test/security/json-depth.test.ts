/**
 * Deeply nested JSON is rejected with 400 VALIDATION_ERROR before anything recursive touches
 * it (it used to overflow the stack: a 500), in every admin JSON body and in flag values given
 * to the engine directly.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors.js'
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../../src/common/json-depth.js'
import { FlagService } from '../../src/flags/service.js'
import { authedAdmin, closeAdmins } from '../admin/helpers.js'
import { booleanFlag } from '../flags/helpers.js'

afterEach(closeAdmins)

const nested = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { v: value }
  return value
}
const deepText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

const jsonFlag = (value: unknown) => ({
  key: 'cfg',
  name: 'cfg',
  type: 'json',
  variations: [
    { name: 'a', value: { x: value } },
    { name: 'b', value: {} },
  ],
  off_variation: 'b',
  fallthrough: 'a',
})

describe('JSON nesting depth', () => {
  it('measures depth without recursion', () => {
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH - 1), MAX_JSON_DEPTH)).toBe(false)
    expect(jsonDepthExceeds(nested(100_000), MAX_JSON_DEPTH)).toBe(true)
  })

  it('rejects deep admin bodies with 400 and changes nothing', async () => {
    const flags = new FlagService()
    await flags.start()
    const { call } = await authedAdmin({ flags })
    for (const [method, url, body] of [
      ['PUT', '/flags/cfg', JSON.stringify(jsonFlag('DEEP')).replace('"DEEP"', deepText(5000))],
      ['PATCH', '/flags/cfg', `{"description":${deepText(5000)}}`],
      ['POST', '/routes/enable', `{"route":"GET:/payments","reason":${deepText(3000)}}`],
      ['POST', '/flags/cfg/evaluate', `{"context":{"key":"u","a":${deepText(100_000)}}}`],
    ] as const) {
      const reply = await call(method, url, body, { 'content-type': 'application/json' })
      expect(reply.statusCode, `${method} ${url}`).toBe(400)
      expect(reply.json().error.code).toBe('VALIDATION_ERROR')
    }
    expect((await call('GET', '/flags')).json()).toEqual([])
    expect((await call('PUT', '/flags/cfg', jsonFlag(nested(10)))).statusCode).toBe(201)
  })

  it('rejects deep flag values and patches given to the engine', async () => {
    const service = new FlagService()
    await service.start()
    await expect(service.saveFlag(jsonFlag(nested(5000)))).rejects.toThrow(ValidationError)
    await service.saveFlag(booleanFlag('f'))
    await expect(service.patchFlag('f', { description: nested(5000) })).rejects.toThrow(
      ValidationError,
    )
    expect(await service.listFlags()).toHaveLength(1)
  })
})
