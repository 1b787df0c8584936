/**
 * Three OS processes, each with its own TaskManager, share one durable store (a SQLite file, and
 * Redis) and a queue with `groupConcurrency: 1` and `rateLimit: '10/second'`: across all three,
 * no two tasks of one group ever run at once, and no more than 10 tasks start in any second.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { deleteKeys } from '../../helpers/redis.js'
import { REDIS_URL, serverEnabled, uniquePrefix } from '../persistence/helpers.js'
import { expectAtMost } from './behaviour.js'

const dir = mkdtempSync(join(tmpdir(), 'sy-groups-mp-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHILD = fileURLToPath(new URL('../fixtures/groups-child.ts', import.meta.url))
const redisPrefix = `sy-test:${uniquePrefix('grp_mp')}`

interface SharedStore {
  kind: 'sqlite' | 'redis'
  url: string
  prefix: string
  enabled: () => Promise<boolean>
  cleanup: () => Promise<void>
}

const stores: SharedStore[] = [
  {
    kind: 'sqlite',
    url: join(dir, 'shared.db'),
    prefix: '',
    enabled: () => Promise.resolve(true),
    cleanup: () => Promise.resolve(),
  },
  {
    kind: 'redis',
    url: REDIS_URL,
    prefix: redisPrefix,
    enabled: () => serverEnabled(REDIS_URL, 'groups/multi-process.test.ts'),
    cleanup: () => deleteKeys(redisPrefix, REDIS_URL),
  },
]

function runChild(store: SharedStore, out: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      SY_STORE_KIND: store.kind,
      SY_STORE_URL: store.url,
      SY_STORE_PREFIX: store.prefix,
      SY_OUT: out,
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
      else reject(new Error(`${store.kind} child exited with ${String(code)}: ${stdout} ${stderr}`))
    })
  })
}

describe('group limits across three processes on one store', () => {
  for (const store of stores) {
    it.concurrent(
      `${store.kind}: one running task per group and at most 10 starts per second`,
      async () => {
        if (!(await store.enabled())) return
        const out = join(dir, `${store.kind}.txt`)
        writeFileSync(out, '')
        try {
          await Promise.all([runChild(store, out), runChild(store, out), runChild(store, out)])
        } finally {
          await store.cleanup()
        }
        const events = readFileSync(out, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [kind = '', group = '', at = ''] = line.split(' ')
            return { kind, group, at: Number(at) }
          })
        const starts = events.filter((event) => event.kind === 'start')
        expect(starts).toHaveLength(24)
        for (const group of ['a', 'b']) {
          // In file order a group's lines must alternate start, end: a second start before the
          // running one's end would be two tasks of the group at once.
          const kinds = events.filter((event) => event.group === group).map((event) => event.kind)
          expect(kinds).toEqual(
            Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? 'start' : 'end')),
          )
        }
        // Each process reads its clock when its task starts, after the gate's answer reached
        // it: with three processes starting on two busy cores, that lag reaches ~150 ms.
        expectAtMost(
          starts.map((event) => event.at),
          10,
          1000,
          200,
        )
      },
      90_000,
    )
  }
})
