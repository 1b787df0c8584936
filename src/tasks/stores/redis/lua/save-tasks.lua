-- save-tasks.lua: inserts or replaces task records and keeps every index consistent in one
-- atomic step (status/function/queue sorted sets by creation time, the finished-time set that
-- retention scans, and the per-(function, status) counters behind the metrics).
--
-- KEYS     none (key names derive from ARGV[1]; the store targets one Redis, not a cluster)
-- ARGV[1]  key prefix
-- ARGV[2]  claim owner, or "" to leave any existing claim as it is
-- ARGV[3]  lease end (epoch ms) when ARGV[2] is set
-- ARGV[4..] groups of 8: task_id, status, func_name, queue, created_ms, finished_ms ("" while
--          live), duration (seconds), JSON body
--
-- Returns the number of records written.

local p = ARGV[1]
local owner = ARGV[2]
local lease = ARGV[3]
local n = 0
for i = 4, #ARGV, 8 do
  local id, status, func, queue = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local created, finished, duration, body = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
  local key = p .. 'task:' .. id
  local old = redis.call('HMGET', key, 'status', 'func', 'queue', 'duration')
  if old[1] then
    redis.call('ZREM', p .. 'idx:status:' .. old[1], id)
    redis.call('ZREM', p .. 'idx:func:' .. old[2], id)
    redis.call('ZREM', p .. 'idx:queue:' .. old[3], id)
    redis.call('HINCRBY', p .. 'agg:count', old[2] .. '\n' .. old[1], -1)
    redis.call('HINCRBYFLOAT', p .. 'agg:duration', old[2] .. '\n' .. old[1], -tonumber(old[4]))
  end
  redis.call('ZADD', p .. 'idx:all', created, id)
  redis.call('ZADD', p .. 'idx:status:' .. status, created, id)
  redis.call('ZADD', p .. 'idx:func:' .. func, created, id)
  redis.call('ZADD', p .. 'idx:queue:' .. queue, created, id)
  redis.call('HINCRBY', p .. 'agg:count', func .. '\n' .. status, 1)
  redis.call('HINCRBYFLOAT', p .. 'agg:duration', func .. '\n' .. status, duration)
  if finished == '' then
    redis.call('ZREM', p .. 'idx:finished', id)
  else
    redis.call('ZADD', p .. 'idx:finished', finished, id)
  end
  redis.call('HSET', key, 'status', status, 'func', func, 'queue', queue, 'created', created,
    'duration', duration, 'body', body)
  if owner ~= '' then
    redis.call('HSET', key, 'claimed_by', owner, 'lease_until', lease)
    redis.call('SADD', p .. 'owner:' .. owner, id)
  end
  n = n + 1
end
return n
