import { describe, expect, it } from 'vitest'
import { booleanFlag } from '../flags/helpers.js'
import { ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { server, run } = ctlServerForFile()

describe('ctl keys', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('creates a key (shown once), lists it by hint, and revokes it', async () => {
    const created = await run(['keys', 'create', 'checkout-web'])
    expect(created.code).toBe(0)
    const [, line, warning] = created.stdout.split('\n')
    const key = line!.trim()
    expect(key).toMatch(/^syk_[A-Za-z0-9_-]{43}$/)
    expect(warning).toMatch(/shown only now/)
    const id = /Evaluation key (ek_[0-9a-f]+) \(checkout-web\) created:/.exec(created.stdout)![1]!

    // The key works on the OFREP endpoints of the server.
    await server().engine.saveFlag(booleanFlag('banner'))
    const evaluation = await fetch(`${server().url}/ofrep/v1/evaluate/flags/banner`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(evaluation.status).toBe(200)

    const list = await run(['keys', 'list'])
    expect(list.code).toBe(0)
    const lines = list.stdout.split('\n')
    expect(lines[0]).toMatch(/^ID\s+Name\s+Key\s+Flags\s+Created\s+By$/)
    expect(lines[1]).toContain(id)
    expect(lines[1]).toMatch(/ all /)
    expect(lines[1]).toContain(`${key.slice(0, 8)}…${key.slice(-4)}`)
    expect(list.stdout).not.toContain(key)
    expect(list.stdout).toContain('Showing 1–1 of 1 (last page)')
    const json = JSON.parse((await run(['keys', 'list', '--json'])).stdout)
    expect(json).toMatchObject({
      total: 1,
      items: [{ id, name: 'checkout-web', created_by: 'anonymous' }],
    })

    expect(await run(['keys', 'revoke', id])).toMatchObject({
      code: 0,
      stdout: `Evaluation key ${id} revoked.\n`,
    })
    expect((await run(['keys', 'list'])).stdout).toContain('No evaluation keys.')
    const again = await run(['keys', 'revoke', id])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^error: No evaluation key .* \(EVALUATION_KEY_NOT_FOUND\)/)
  })

  it('prints the key as JSON with --json, and refuses a missing name with exit 2', async () => {
    const created = await run(['keys', 'create', 'ios-app', '--json'])
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: 'ios-app',
      key: expect.stringMatching(/^syk_/),
    })
    expect((await run(['keys', 'create'])).code).toBe(2)
  })
  it('limits a key to some flags with --flags, and refuses a bad pattern with nothing stored', async () => {
    const created = await run([
      'keys',
      'create',
      'shop',
      '--flags',
      'checkout-*, tag:web,',
      '--json',
    ])
    expect(created.code).toBe(0)
    const issued = JSON.parse(created.stdout) as { id: string; key: string; flags: string[] }
    expect(issued.flags).toEqual(['checkout-*', 'tag:web'])
    const list = await run(['keys', 'list'])
    expect(list.stdout.split('\n').find((line) => line.includes(issued.id))).toContain(
      'checkout-*,tag:web',
    )
    await server().engine.saveFlag(booleanFlag('billing'))
    const hidden = await fetch(`${server().url}/ofrep/v1/evaluate/flags/billing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issued.key}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(hidden.status).toBe(404)

    const refused = await run(['keys', 'create', 'bad', '--flags', 'check*out'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/VALIDATION_ERROR/)
    const names = JSON.parse((await run(['keys', 'list', '--json'])).stdout).items.map(
      (item: { name: string }) => item.name,
    )
    expect(names).not.toContain('bad')
    expect((await run(['keys', 'revoke', issued.id])).code).toBe(0)
  })
})
