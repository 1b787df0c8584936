import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { sqliteStore } from '../../../src/tasks/stores/index.js'
import { storeConformance } from './conformance/index.js'
import { migrationUpgrade } from './migration-upgrade.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-tasks-sqlite-'))
const path = join(dir, 'tasks.db')
const upgradeDir = mkdtempSync(join(tmpdir(), 'sy-tasks-sqlite-upgrade-'))

afterAll(() => rmSync(upgradeDir, { recursive: true, force: true }))

storeConformance({
  name: 'SQLite',
  enabled: () => Promise.resolve(true),
  open: () => sqliteStore(path),
  cleanup: () => {
    rmSync(dir, { recursive: true, force: true })
    return Promise.resolve()
  },
})

migrationUpgrade(
  'SQLite',
  () => Promise.resolve(true),
  (options) => sqliteStore(join(upgradeDir, 'upgrade.db'), options),
)
