/**
 * Two OS processes, each with its own TaskManager, share one durable store (SQLite file,
 * PostgreSQL, MariaDB, Redis) and run `schedule({ every: 1 })` in real time for a few seconds:
 * across both processes no slot fires twice and no slot between the first and the last is
 * missing. The stores run concurrently so the file stays short.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import mysql from 'mysql2/promise'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  MYSQL_URL,
  PG_URL,
  REDIS_URL,
  TABLES,
  serverEnabled,
  uniquePrefix,
} from './persistence/helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-multi-process-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHILD = fileURLToPath(new URL('./fixtures/schedule-child.ts', import.meta.url))
// The issue asks for 10 s of real time with both processes running.
const RUN_MS = 10_000
const FILE = 'multi-process.test.ts'

/** One shared store as the children open it, plus how to drop its namespace afterwards. */
interface SharedStore {
  kind: 'sqlite' | 'postgres' | 'mysql' | 'redis'
  url: string
  prefix: string
  enabled: () => Promise<boolean>
  cleanup: () => Promise<void>
}

function sharedStores(): SharedStore[] {
  const pgPrefix = uniquePrefix('mp_pg')
  const mysqlPrefix = uniquePrefix('mp_my')
  const redisPrefix = `sy-test:${uniquePrefix('mp_redis')}`
  return [
    {
      kind: 'sqlite',
      url: join(dir, 'shared.db'),
      prefix: '',
      enabled: () => Promise.resolve(true),
      cleanup: () => Promise.resolve(),
    },
    {
      kind: 'postgres',
      url: PG_URL,
      prefix: pgPrefix,
      enabled: () => serverEnabled(PG_URL, FILE),
      cleanup: async () => {
        const client = new pg.Client({ connectionString: PG_URL })
        await client.connect()
        for (const table of TABLES) await client.query(`drop table if exists "${pgPrefix}${table}"`)
        await client.end()
      },
    },
    {
      kind: 'mysql',
      url: MYSQL_URL,
      prefix: mysqlPrefix,
      enabled: () => serverEnabled(MYSQL_URL, FILE),
      cleanup: async () => {
        const connection = await mysql.createConnection(MYSQL_URL)
        for (const table of TABLES) {
          await connection.query(`drop table if exists \`${mysqlPrefix}${table}\``)
        }
        await connection.end()
      },
    },
    {
      kind: 'redis',
      url: REDIS_URL,
      prefix: redisPrefix,
      enabled: () => serverEnabled(REDIS_URL, FILE),
      cleanup: async () => {
        const client = new Redis(REDIS_URL)
        const keys = await client.keys(`${redisPrefix}*`)
        if (keys.length > 0) await client.del(...keys)
        client.disconnect()
      },
    },
  ]
}

/** Runs one child to completion; rejects with its stderr when it fails. */
function runChild(store: SharedStore, out: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      SY_STORE_KIND: store.kind,
      SY_STORE_URL: store.url,
      SY_STORE_PREFIX: store.prefix,
      SY_OUT: out,
      SY_RUN_MS: String(RUN_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code === 0 && stdout.includes('done')) resolve()
      else reject(new Error(`${store.kind} child exited with ${String(code)}: ${stderr}`))
    })
  })
}

/** The slots (epoch ms) in the order they were written, from `<iso slot> <pid>` lines. */
function firedSlots(out: string): { slot: number; pid: string }[] {
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [iso = '', pid = ''] = line.split(' ')
      return { slot: Date.parse(iso), pid }
    })
}

describe('schedules across two processes on one durable store', () => {
  for (const store of sharedStores()) {
    it.concurrent(
      `${store.kind}: every slot fires exactly once, none missing`,
      async () => {
        if (!(await store.enabled())) return
        const out = join(dir, `${store.kind}.txt`)
        writeFileSync(out, '')
        try {
          await Promise.all([runChild(store, out), runChild(store, out)])
        } finally {
          await store.cleanup()
        }
        const fired = firedSlots(out)
        expect(fired.length).toBeGreaterThanOrEqual(8)
        for (const { slot } of fired) {
          expect(Number.isNaN(slot)).toBe(false)
          expect(slot % 1000).toBe(0)
        }
        const slots = fired.map(({ slot }) => slot).sort((a, b) => a - b)
        expect(new Set(slots).size).toBe(slots.length)
        const first = slots[0]!
        const contiguous = Array.from({ length: slots.length }, (_, i) => first + i * 1000)
        expect(slots).toEqual(contiguous)
      },
      60_000,
    )
  }
})
