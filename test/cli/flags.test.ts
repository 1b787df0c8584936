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

  it('sets, shows and removes flag metadata from the command line', async () => {
    const created = await run(
      [
        'flags',
        'create',
        '--file',
        '-',
        '--metadata-json',
        '{"version": "1.0.2", "ratio": 0.1}',
        '--metadata',
        'owner=team-a',
        '--metadata',
        'tier=2',
        '--metadata',
        'beta=true',
      ],
      JSON.stringify(booleanFlag('described', { metadata: { kept: 'from file' } })),
    )
    expect(created).toMatchObject({ code: 0, stdout: 'Flag described created.\n' })
    expect((await flags.getFlag('described'))?.metadata).toStrictEqual({
      kept: 'from file',
      version: '1.0.2',
      ratio: 0.1,
      owner: 'team-a',
      tier: 2,
      beta: true,
    })
    const shown = await run(['flags', 'get', 'described'])
    expect(shown.stdout).toContain('Metadata:\n')
    expect(shown.stdout).toContain('  • owner = "team-a"\n')
    expect(shown.stdout).toContain('  • tier = 2\n')

    await run(['flags', 'patch', 'described', '--metadata-json', '{"kept": null, "ratio": null}'])
    await run(['flags', 'patch', 'described', '--metadata', 'owner=team-b'])
    expect((await flags.getFlag('described'))?.metadata).toStrictEqual({
      version: '1.0.2',
      owner: 'team-b',
      tier: 2,
      beta: true,
    })
    const evaluated = await run(['flags', 'evaluate', 'described', '--key', 'u1'])
    expect(evaluated.stdout).toContain(
      'Metadata: version="1.0.2", owner="team-b", tier=2, beta=true\n',
    )

    const [reserved, malformed, nothing] = await Promise.all([
      run(['flags', 'patch', 'described', '--metadata', 'switchyard.reason=x']),
      run(['flags', 'patch', 'described', '--metadata', 'no-equals-sign']),
      run(['flags', 'patch', 'described']),
    ])
    expect(reserved.code).toBe(1)
    expect(reserved.stderr).toMatch(/VALIDATION_ERROR/)
    expect(reserved.stderr).toContain('/metadata/switchyard.reason')
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toContain('expected key=value')
    expect(nothing.code).toBe(2)
    expect((await flags.getFlag('described'))?.metadata.owner).toBe('team-b')
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
