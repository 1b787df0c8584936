-- save-tasks.lua: inserts or replaces task records and keeps every index consistent in one
-- atomic step: the status/function/queue sorted sets by creation time, the finished-time set
-- that retention scans, the per-(function, status) counters (live counts), the id and tag
-- indexes of new records, the metric buckets of records that become terminal, and one entry of
-- the change stream.
--
-- KEYS     none (key names derive from ARGV[1]; the store targets one Redis, not a cluster)
-- ARGV[1]  key prefix
-- ARGV[2]  claim owner, or "" to leave any existing claim as it is
-- ARGV[3]  lease end (epoch ms) when ARGV[2] is set
-- ARGV[4]  origin of the write (the change stream's "o")
-- ARGV[5..] groups of 11: task_id, status, func_name, queue, created_ms, finished_ms ("" while
--          live), duration (seconds), duration bin, tag hashes (space-separated, "" for none),
--          idempotency key ("" for none), JSON body
--
-- Metric buckets: hash m:<minute> (and m:total for all time) with fields
-- "n\n<func>\n<status>\n<bin>" (count) and "d\n<func>\n<status>\n<bin>" (duration sum); sorted
-- set m:minutes lists the minutes.
--
-- Returns the number of records written.

local p = ARGV[1]
local owner = ARGV[2]
local lease = ARGV[3]
local origin = ARGV[4]
local terminal = { success = true, failed = true, cancelled = true, interrupted = true, rejected = true }
local ids = {}
for i = 5, #ARGV, 11 do
  local id, status, func, queue = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local created, finished, duration, bin = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
  local tags, idem, body = ARGV[i + 8], ARGV[i + 9], ARGV[i + 10]
  local key = p .. 'task:' .. id
  local old = redis.call('HMGET', key, 'status', 'func', 'queue', 'duration')
  if old[1] then
    redis.call('ZREM', p .. 'idx:status:' .. old[1], id)
    redis.call('ZREM', p .. 'idx:func:' .. old[2], id)
    redis.call('ZREM', p .. 'idx:queue:' .. old[3], id)
    redis.call('HINCRBY', p .. 'agg:count', old[2] .. '\n' .. old[1], -1)
    redis.call('HINCRBYFLOAT', p .. 'agg:duration', old[2] .. '\n' .. old[1], -tonumber(old[4]))
  else
    redis.call('ZADD', p .. 'idx:id', 0, id)
    for hash in string.gmatch(tags, '%S+') do
      redis.call('ZADD', p .. 'idx:tag:' .. hash, created, id)
    end
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
    if terminal[status] and not (old[1] and terminal[old[1]]) then
      local minute = string.format('%.0f', math.floor(tonumber(finished) / 60000) * 60000)
      local cell = func .. '\n' .. status .. '\n' .. bin
      for _, bucket in ipairs({ p .. 'm:' .. minute, p .. 'm:total' }) do
        redis.call('HINCRBY', bucket, 'n\n' .. cell, 1)
        redis.call('HINCRBYFLOAT', bucket, 'd\n' .. cell, duration)
      end
      redis.call('ZADD', p .. 'm:minutes', minute, minute)
    end
  end
  redis.call('HSET', key, 'status', status, 'func', func, 'queue', queue, 'created', created,
    'duration', duration, 'tags', tags, 'idem', idem, 'body', body)
  if owner ~= '' then
    redis.call('HSET', key, 'claimed_by', owner, 'lease_until', lease)
    redis.call('SADD', p .. 'owner:' .. owner, id)
  end
  ids[#ids + 1] = id
end
if #ids > 0 then
  redis.call('XADD', p .. 'changes', 'MAXLEN', '~', 10000, '*', 'o', origin, 'ids', table.concat(ids, ','))
end
return #ids
