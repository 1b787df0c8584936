/**
 * The flag input the drills and the flag tests start from: a boolean flag with variations `on`
 * and `off`, serving `on`. Here, not under test/, because the drills are built without the
 * tests.
 */
import type { FlagInput } from '../../src/flags/index.js'

/** A boolean flag input with variations `on`/`off`, serving `on` unless `extra` says otherwise. */
export function booleanFlag(key: string, extra: Partial<FlagInput> = {}): FlagInput {
  return {
    key,
    name: key,
    type: 'boolean',
    variations: [
      { name: 'on', value: true },
      { name: 'off', value: false },
    ],
    off_variation: 'off',
    fallthrough: 'on',
    ...extra,
  }
}
