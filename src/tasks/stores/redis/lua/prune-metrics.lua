-- prune-metrics.lua: drops up to N metric minutes that end by a cutoff, taking their counts and
-- duration sums out of the all-time totals (m:total), in one atomic step per call.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  last minute to drop (epoch ms, inclusive)
-- ARGV[3]  limit (minutes per call)
--
-- Returns the number of minutes dropped.

local p, last, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local total = p .. 'm:total'
local minutes = redis.call('ZRANGEBYSCORE', p .. 'm:minutes', '-inf', last, 'LIMIT', 0, limit)
for _, minute in ipairs(minutes) do
  local bucket = p .. 'm:' .. minute
  local flat = redis.call('HGETALL', bucket)
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    if string.sub(field, 1, 1) == 'n' then
      if redis.call('HINCRBY', total, field, -tonumber(value)) <= 0 then
        redis.call('HDEL', total, field, 'd' .. string.sub(field, 2))
      end
    elseif redis.call('HEXISTS', total, 'n' .. string.sub(field, 2)) == 1 then
      redis.call('HINCRBYFLOAT', total, field, -tonumber(value))
    end
  end
  redis.call('DEL', bucket)
  redis.call('ZREM', p .. 'm:minutes', minute)
end
return #minutes
