/**
 * `ctl export`, `ctl diff` and `ctl apply` against a real server: YAML out and in, `+`/`~`/`-`
 * lines or `No changes.`, `--exit-code` 3 when there are changes, `--dry-run`, `--prune`, and an
 * invalid document refused with every problem listed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { booleanFlag } from '../flags/helpers.js'
import { ctlServerForFile, CLI_TEST_TIMEOUT } from './helpers.js'

const { server, run } = ctlServerForFile()
const dir = mkdtempSync(join(tmpdir(), 'ctl-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('ctl export / diff / apply', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('exports YAML (or JSON, or to a file) that diffs as No changes', async () => {
    const { engine } = server()
    // A line break is data in an export (never cleaned as terminal output is).
    await engine.saveFlag(booleanFlag('multi-line', { description: 'first line\nsecond line' }))
    await engine.saveFlag(booleanFlag('dark-mode'))
    await engine.disable('GET:/payments', { reason: 'incident' })
    const file = join(dir, 'config.yaml')
    const [yaml, json, written] = await Promise.all([
      run(['export']),
      run(['export', '--format', 'json']),
      run(['export', '-o', file]),
    ])
    expect(yaml.code, yaml.stderr).toBe(0)
    const doc = parse(yaml.stdout) as Record<string, unknown>
    expect(doc).toMatchObject({
      apiVersion: 'switchyard/v1',
      kind: 'Config',
      routes: [
        { route: 'GET:/payments', service: 'default', status: 'disabled', reason: 'incident' },
      ],
    })
    const flags = doc.flags as { key: string; description: string }[]
    expect(flags.find((flag) => flag.key === 'multi-line')?.description).toBe(
      'first line\nsecond line',
    )
    expect(JSON.parse(json.stdout)).toEqual(doc)
    expect(written.code).toBe(0)
    expect(written.stderr).toBe(`Wrote ${file}.\n`)
    expect(parse(readFileSync(file, 'utf8'))).toEqual(doc)

    const [same, sameCode] = await Promise.all([
      run(['diff', '-f', file]),
      run(['diff', '-f', file, '--exit-code']),
    ])
    expect(same).toMatchObject({ code: 0, stdout: 'No changes.\n' })
    expect(sameCode).toMatchObject({ code: 0, stdout: 'No changes.\n' })
  })

  it('diff prints + ~ - lines and exits 3 with --exit-code; apply makes them; --dry-run does not', async () => {
    const { engine } = server()
    const exported = await run(['export', '--format', 'json'])
    const doc = JSON.parse(exported.stdout) as {
      flags: Record<string, unknown>[]
      segments: unknown[]
      routes: unknown[]
    }
    doc.flags = doc.flags.map((flag) =>
      flag.key === 'dark-mode' ? { ...flag, description: 'night theme' } : flag,
    )
    doc.segments.push({ key: 'staff', name: 'Staff', included: ['u1'] })
    doc.routes = []
    const file = join(dir, 'changed.yaml')
    writeFileSync(file, stringify(doc))

    const diff = await run(['diff', '-f', file, '--exit-code'])
    expect(diff.code).toBe(3)
    expect(diff.stdout).toBe(
      '+ segment staff\n~ flag dark-mode  description: "" → night theme\nPlan: 1 to create, 1 to update, 0 to delete.\n',
    )
    const pruned = await run(['diff', '-f', file, '--prune'])
    expect(pruned.code).toBe(0)
    expect(pruned.stdout).toContain('- route_state GET:/payments (service default)\n')

    const dry = await run(['apply', '-f', file, '--dry-run'])
    expect(dry.stdout).toBe(
      '+ segment staff\n~ flag dark-mode  description: "" → night theme\nDry run, nothing changed: 1 to create, 1 to update, 0 to delete.\n',
    )
    expect(await engine.getSegment('staff')).toBeNull()

    const applied = await run(['apply', '-f', file])
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout.split('\n').at(-2)).toBe('Applied: 1 created, 1 updated, 0 deleted.')
    expect((await engine.getFlag('dark-mode'))?.description).toBe('night theme')
    expect(engine.getState('GET:/payments')[0]?.status).toBe('disabled')

    const prune = await run(['apply', '-f', file, '--prune'])
    expect(prune.stdout).toBe(
      '- route_state GET:/payments (service default)\nApplied: 0 created, 0 updated, 1 deleted.\n',
    )
    expect(engine.getState('GET:/payments')[0]?.status).toBe('active')
    expect(await run(['diff', '-f', file, '--exit-code', '--prune'])).toMatchObject({
      code: 0,
      stdout: 'No changes.\n',
    })
    const audit = await engine.getAuditLog({ actor: 'anonymous' })
    expect(audit.items.slice(0, 3).map((entry) => entry.platform)).toEqual([
      'apply',
      'apply',
      'apply',
    ])
  })

  it('an invalid document changes nothing and lists every problem; an unreadable one is bad usage', async () => {
    const file = join(dir, 'bad.yaml')
    writeFileSync(
      file,
      stringify({
        apiVersion: 'switchyard/v1',
        kind: 'Config',
        routes: [{ route: 'GET:/nowhere', status: 'disabled' }],
        rateLimits: { global: { limit: 'often' } },
      }),
    )
    const before = await run(['export', '--format', 'json'])
    const refused = await run(['apply', '-f', file])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('(VALIDATION_ERROR)')
    expect(refused.stderr).toContain('  - /rateLimits/global/limit: ')
    expect(refused.stderr).toContain('  - /routes/0/route: no route GET:/nowhere is registered')
    expect((await run(['export', '--format', 'json'])).stdout).toBe(before.stdout)

    writeFileSync(file, 'kind: [unclosed')
    const broken = await run(['diff', '-f', file])
    expect(broken.code).toBe(2)
    expect(broken.stderr).toMatch(/^error: .*bad\.yaml is not valid YAML or JSON/)
    const missing = await run(['apply', '-f', join(dir, 'absent.yaml')])
    expect(missing.code).toBe(2)
  })
})
