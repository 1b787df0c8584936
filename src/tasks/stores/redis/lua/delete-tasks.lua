-- delete-tasks.lua: deletion by id. Deletes the records of the given ids that are terminal,
-- with their index entries, tag entries and the idempotency key each holds; pending, running
-- and unknown ids are left alone. The per-record aggregates follow the records; the metric
-- minutes keep their counts (a deleted record still ran).
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2..] task ids
--
-- Returns the number of deleted records.

local p = ARGV[1]
local n = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  local key = p .. 'task:' .. id
  local f = redis.call('HMGET', key, 'status', 'func', 'queue', 'tags', 'idem', 'duration', 'flow')
  if f[1] and f[1] ~= 'pending' and f[1] ~= 'running' then
    redis.call('ZREM', p .. 'idx:finished', id)
    redis.call('ZREM', p .. 'idx:all', id)
    redis.call('ZREM', p .. 'idx:retried', id)
    redis.call('ZREM', p .. 'idx:id', id)
    redis.call('ZREM', p .. 'idx:status:' .. f[1], id)
    redis.call('ZREM', p .. 'idx:func:' .. f[2], id)
    redis.call('ZREM', p .. 'idx:queue:' .. f[3], id)
    redis.call('HINCRBY', p .. 'agg:count', f[2] .. '\n' .. f[1], -1)
    redis.call('HINCRBYFLOAT', p .. 'agg:duration', f[2] .. '\n' .. f[1], -tonumber(f[6]))
    for hash in string.gmatch(f[4] or '', '%S+') do
      redis.call('ZREM', p .. 'idx:tag:' .. hash, id)
    end
    if f[5] and f[5] ~= '' and redis.call('GET', p .. 'idem:' .. f[5]) == id then
      redis.call('DEL', p .. 'idem:' .. f[5])
    end
    -- A flow node's counters and flow index entry go with it.
    local root = f[7] or redis.call('HGET', p .. 'flow:' .. id, 'flow')
    if root then
      redis.call('ZREM', p .. 'idx:flow:' .. root, id)
      redis.call('SREM', p .. 'flows:failing', id)
      redis.call('DEL', p .. 'flow:' .. id)
    end
    redis.call('DEL', key)
    n = n + 1
  end
end
return n
