import { describe, expect, it } from 'vitest'
import { loadDriver } from '../../../src/tasks/stores/drivers.js'
import {
  sqliteStore,
  StoreDriverMissingError,
  StoreError,
} from '../../../src/tasks/stores/index.js'

describe('store drivers and options', () => {
  it('a missing driver is a clear error naming the package to install', async () => {
    const failure = loadDriver('switchyard-no-such-driver', 'Example')
    await expect(failure).rejects.toThrow(StoreDriverMissingError)
    await expect(failure).rejects.toThrow('npm install switchyard-no-such-driver')
  })

  it('rejects a table prefix that could inject SQL, before touching any file', async () => {
    const store = sqliteStore(':memory:', { tablePrefix: 'x"; drop table y; --' })
    await expect(store.init()).rejects.toThrow(StoreError)
    await store.close()
  })

  it('works on an in-memory SQLite database', async () => {
    const store = sqliteStore(':memory:')
    expect(await store.oneOffs.count()).toBe(0)
    expect(store.kind).toBe('sqlite')
    await store.close()
  })
})
