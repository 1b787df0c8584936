/**
 * The JSON Schema shipped as `config.schema.json`: it is the document schema the server checks
 * with (regenerate it with `UPDATE_CONFIG_SCHEMA=1 npx vitest run test/config/schema.test.ts`
 * after changing the document), it validates an export as a standalone JSON Schema validator
 * reads it, and it refuses a wrong document.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Schema from 'typebox/schema'
import { afterEach, describe, expect, it } from 'vitest'
import { configJsonSchema } from '../../src/config-as-code/document.js'
import { booleanFlag } from '../flags/helpers.js'
import { API, buildAdmin, closeAdmins, closeLater } from '../admin/helpers.js'

afterEach(closeAdmins)

const file = fileURLToPath(new URL('../../config.schema.json', import.meta.url))

describe('config.schema.json', () => {
  it('is the schema of the document the server checks', () => {
    if (process.env.UPDATE_CONFIG_SCHEMA === '1')
      writeFileSync(file, `${JSON.stringify(configJsonSchema(), null, 2)}\n`)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(configJsonSchema())
  })

  it('validates an export and refuses a wrong document', async () => {
    const { app, engine } = await buildAdmin({ clock: null })
    closeLater(app)
    await engine.saveFlag(booleanFlag('dark-mode'))
    await engine.disable('GET:/payments', { reason: 'incident' })
    await engine.setGlobalRateLimit({ limit: '100/minute' })
    const exported: unknown = (await app.inject({ url: `${API}/config` })).json()
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Schema.XSchema
    const validator = Schema.Compile(schema)
    expect(validator.Check(exported)).toBe(true)
    const wrong = [
      { ...(exported as object), kind: 'Settings' },
      { ...(exported as object), routes: [{ route: 'GET:/payments', status: 'paused' }] },
      { ...(exported as object), rateLimits: { global: { limit: 100 } } },
      { ...(exported as object), extra: true },
      { ...(exported as object), maintenance: { services: { Billing: { active: true } } } },
    ]
    for (const doc of wrong)
      expect(validator.Check(doc), JSON.stringify(doc).slice(0, 80)).toBe(false)
  })
})
