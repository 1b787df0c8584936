/**
 * The change feed on Redis (the {@link TaskChangeFeed} port): a stream (`changes`, trimmed to
 * about 10,000 entries) to which `save-tasks.lua` adds one entry per write. Stream ids are
 * assigned inside the script, so they are in commit order and read exactly once.
 *
 * A cancel request is an entry with the field `c`. It is in the stream rather than a pub/sub
 * message so that a reader that was busy or reconnecting still finds it on its next read. An
 * entry with the field `k` and no ids announces that operator controls changed.
 */
import type { TaskChangeFeed } from '../ports.js'
import type { RedisOps } from './ops.js'

/** Adds a cancel-request entry only while the task's status is pending or running. */
const REQUEST_CANCEL = `
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'pending' and status ~= 'running' then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 10000, '*', 'o', ARGV[1], 'ids', ARGV[2], 'c', '1')
return 1`

type StreamEntry = [id: string, fields: string[]]

/** The change feed on Redis. */
export function redisChanges(ops: RedisOps, origin: string): TaskChangeFeed {
  return {
    origin,
    async read(after, limit) {
      const stream = ops.key('changes')
      if (after === null) {
        const last = (await ops.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)) as StreamEntry[]
        return { position: last[0]?.[0] ?? '0-0', changes: [] }
      }
      const entries = (await ops.call(
        'XRANGE',
        stream,
        `(${after}`,
        '+',
        'COUNT',
        limit,
      )) as StreamEntry[]
      const changes = entries.map(([id, fields]) => {
        const values = new Map<string, string>()
        for (let i = 0; i < fields.length; i += 2) values.set(fields[i] ?? '', fields[i + 1] ?? '')
        const ids = values.get('ids') ?? ''
        return {
          id,
          origin: values.get('o') ?? '',
          task_ids: ids === '' ? [] : ids.split(','),
          ...(values.has('c') ? { cancel: true } : {}),
          ...(values.has('k') ? { controls: true } : {}),
        }
      })
      return { position: entries.at(-1)?.[0] ?? after, changes }
    },
    async requestCancel(taskId) {
      const keys = [ops.key('task:', taskId), ops.key('changes')]
      const added = await ops.call('EVAL', REQUEST_CANCEL, keys.length, ...keys, origin, taskId)
      return Number(added) === 1
    },
    async announceControls() {
      await ops.call(
        'XADD',
        ops.key('changes'),
        'MAXLEN',
        '~',
        10000,
        '*',
        'o',
        origin,
        'ids',
        '',
        'k',
        '1',
      )
    },
  }
}
