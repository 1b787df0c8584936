/**
 * `ctl flags schedule | schedules | unschedule`: a change scheduled from the terminal lands in
 * the flag's scheduled_changes, is listed and cancelled; bad options are usage errors (exit 2)
 * and refusals of the server errors (exit 1), neither changing anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlagService } from '../../src/flags/service.js'
import { booleanFlag } from '../flags/helpers.js'
import { ctl, ctlServer, CLI_TEST_TIMEOUT } from './helpers.js'

let server: Awaited<ReturnType<typeof ctlServer>>
let flags: FlagService
beforeAll(async () => {
  flags = new FlagService()
  await flags.start()
  await flags.saveFlag(booleanFlag('launch'))
  server = await ctlServer(false, { flags })
})
afterAll(async () => {
  await server.close()
})

const run = (args: string[]) => ctl(args, { env: server.env })

describe('ctl flags schedule', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('schedules, lists and cancels changes of a flag', async () => {
    const at = '2099-05-01T09:30:00Z'
    const scheduled = await run(['flags', 'schedule', 'launch', '--at', at, '--action', 'disable'])
    expect(scheduled.code).toBe(0)
    const [pending] = await flags.listScheduledChanges('launch')
    expect(pending).toMatchObject({ action: 'disable', at: '2099-05-01T09:30:00.000+00:00' })
    expect(scheduled.stdout).toBe(
      `Scheduled disable of flag launch at 2099-05-01 09:30:00Z (id ${pending?.id ?? ''}).\n`,
    )
    const update = await run([
      'flags',
      'schedule',
      'launch',
      '--at',
      '2099-04-01T00:00:00Z',
      '--action',
      'update',
      '--patch',
      '{"description": "live"}',
      '--json',
    ])
    const updateChange = JSON.parse(update.stdout) as { id: string; patch: unknown }
    expect(updateChange.patch).toEqual({ description: 'live' })

    const listed = await run(['flags', 'schedules', 'launch'])
    const lines = listed.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+At\s+Action\s+Patch$/)
    expect(lines[1]).toMatch(
      new RegExp(
        `^${updateChange.id}\\s+2099-04-01 00:00:00Z\\s+update\\s+\\{"description":"live"\\}$`,
      ),
    )
    expect(lines[2]).toMatch(
      new RegExp(`^${pending?.id ?? ''}\\s+2099-05-01 09:30:00Z\\s+disable$`),
    )

    const cancelled = await run(['flags', 'unschedule', 'launch', updateChange.id])
    expect(cancelled.stdout).toBe(`Scheduled change ${updateChange.id} of flag launch cancelled.\n`)
    await run(['flags', 'unschedule', 'launch', pending?.id ?? ''])
    expect((await run(['flags', 'schedules', 'launch'])).stdout).toBe('No scheduled changes.\n')
  })

  it('refuses bad options and bad changes, changing nothing', async () => {
    const before = await flags.getFlag('launch')
    const [badAction, badPatch, past, noPatch, unknownId, unknownFlag] = await Promise.all([
      run(['flags', 'schedule', 'launch', '--at', '2099-01-01T00:00:00Z', '--action', 'flip']),
      run([
        'flags',
        'schedule',
        'launch',
        '--at',
        '2099-01-01T00:00:00Z',
        '--action',
        'update',
        '--patch',
        '[1]',
      ]),
      run(['flags', 'schedule', 'launch', '--at', '2001-01-01T00:00:00Z', '--action', 'enable']),
      run(['flags', 'schedule', 'launch', '--at', '2099-01-01T00:00:00Z', '--action', 'update']),
      run(['flags', 'unschedule', 'launch', 'nope']),
      run(['flags', 'schedules', 'nope']),
    ])
    expect(badAction.code).toBe(2)
    expect(badAction.stderr).toContain('expected enable, disable, update')
    expect(badPatch.code).toBe(2)
    for (const refused of [past, noPatch]) {
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(/\(VALIDATION_ERROR\)/)
    }
    expect(past.stderr).toContain('must be in the future')
    expect(unknownId.stderr).toMatch(/\(FLAG_SCHEDULE_NOT_FOUND\)/)
    expect(unknownFlag.stderr).toMatch(/\(FLAG_NOT_FOUND\)/)
    expect(await flags.getFlag('launch')).toEqual(before)
  })
})
