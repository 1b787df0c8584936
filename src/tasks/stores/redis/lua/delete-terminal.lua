-- delete-terminal.lua: retention. Deletes up to N terminal records that finished before a
-- cutoff, with their index entries, counters, tag entries and the idempotency key each holds.
-- Pending and running records are never in the finished set, and the status is checked again
-- before deleting.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  cutoff (epoch ms, exclusive)
-- ARGV[3]  limit
--
-- Returns the number of deleted records.

local p, cutoff, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', p .. 'idx:finished', '-inf', '(' .. cutoff, 'LIMIT', 0, limit)
local n = 0
for _, id in ipairs(ids) do
  local key = p .. 'task:' .. id
  local f = redis.call('HMGET', key, 'status', 'func', 'queue', 'duration', 'tags', 'idem', 'flow')
  redis.call('ZREM', p .. 'idx:finished', id)
  if f[1] and f[1] ~= 'pending' and f[1] ~= 'running' then
    redis.call('ZREM', p .. 'idx:all', id)
    redis.call('ZREM', p .. 'idx:retried', id)
    redis.call('ZREM', p .. 'idx:id', id)
    redis.call('ZREM', p .. 'idx:status:' .. f[1], id)
    redis.call('ZREM', p .. 'idx:func:' .. f[2], id)
    redis.call('ZREM', p .. 'idx:queue:' .. f[3], id)
    redis.call('HINCRBY', p .. 'agg:count', f[2] .. '\n' .. f[1], -1)
    redis.call('HINCRBYFLOAT', p .. 'agg:duration', f[2] .. '\n' .. f[1], -tonumber(f[4]))
    for hash in string.gmatch(f[5] or '', '%S+') do
      redis.call('ZREM', p .. 'idx:tag:' .. hash, id)
    end
    if f[6] and f[6] ~= '' and redis.call('GET', p .. 'idem:' .. f[6]) == id then
      redis.call('DEL', p .. 'idem:' .. f[6])
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
