import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlagService } from '../../src/flags/service.js'
import { booleanFlag } from '../flags/helpers.js'
import { ctl, ctlServer, CLI_TEST_TIMEOUT } from './helpers.js'

let server: Awaited<ReturnType<typeof ctlServer>>
let flags: FlagService
beforeAll(async () => {
  flags = new FlagService()
  await flags.start()
  server = await ctlServer(false, { flags })
})
afterAll(async () => {
  await server.close()
})

const run = (args: string[], input?: string) =>
  ctl(args, { env: server.env, ...(input === undefined ? {} : { input }) })

describe('ctl flags and segments', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('creates, lists, patches, toggles, evaluates and deletes flags', async () => {
    const file = join(server.home, 'checkout.json')
    writeFileSync(file, JSON.stringify(booleanFlag('checkout')))
    const created = await run(['flags', 'create', '--file', file])
    expect(created).toMatchObject({ code: 0, stdout: 'Flag checkout created.\n' })
    const fromStdin = await run(
      ['flag', 'put', 'search', '--file', '-'],
      JSON.stringify(booleanFlag('search')),
    )
    expect(fromStdin.stdout).toBe('Flag search saved.\n')

    const [list, json] = await Promise.all([
      run(['flags', 'list']),
      run(['flags', 'list', '--json']),
    ])
    expect(list.stdout.split('\n')[0]).toMatch(/^Key\s+Type\s+State\s+Name$/)
    expect(list.stdout).toMatch(/checkout\s+boolean\s+ENABLED\s+checkout/)
    expect(JSON.parse(json.stdout).map((f: { key: string }) => f.key)).toEqual([
      'checkout',
      'search',
    ])

    const patched = await run(['flags', 'patch', 'checkout', '{"tags": ["web"]}'])
    expect(patched.stdout).toContain('Tags: web')
    expect((await run(['flags', 'disable', 'checkout'])).stdout).toBe('Flag checkout: DISABLED\n')
    const off = await run(['flags', 'evaluate', 'checkout', '--key', 'u1', '--json'])
    expect(JSON.parse(off.stdout)).toMatchObject({ value: false, reason: 'OFF' })
    await run(['flags', 'enable', 'checkout'])
    const on = await run(['flags', 'evaluate', 'checkout', '--key', 'u1', '--attr', 'plan=pro'])
    expect(on.stdout).toBe('Value: true\nVariation: on\nReason: FALLTHROUGH\n')
    expect((await run(['flags', 'get', 'checkout'])).stdout).toMatch(
      /^Flag: checkout \(boolean\)\s+ENABLED\n/,
    )
    expect((await run(['flags', 'delete', 'search'])).stdout).toBe('Flag search deleted.\n')
    expect((await flags.listFlags()).map((f) => f.key)).toEqual(['checkout'])

    const [missing, badJson, badPatch] = await Promise.all([
      run(['flags', 'get', 'nope']),
      run(['flags', 'create', '--file', '-'], '{not json'),
      run(['flags', 'patch', 'checkout', '{"type": "string"}']),
    ])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/\(FLAG_NOT_FOUND\)/)
    expect(badJson.code).toBe(2)
    expect(badPatch.code).toBe(1)
  })

  it('manages segments', async () => {
    const created = await run(
      ['segments', 'create', '--file', '-'],
      '{"key": "beta", "name": "Beta", "included": ["u1"]}',
    )
    expect(created.stdout).toBe('Segment beta created.\n')
    const list = await run(['segments', 'list'])
    expect(list.stdout).toMatch(/beta\s+Beta\s+1\s+0\s+0/)
    expect(JSON.parse((await run(['segment', 'get', 'beta'])).stdout)).toMatchObject({
      key: 'beta',
    })
    expect((await run(['segments', 'delete', 'beta'])).stdout).toBe('Segment beta deleted.\n')
    expect((await run(['segments', 'delete', 'beta'])).stderr).toMatch(/\(SEGMENT_NOT_FOUND\)/)
  })
})
