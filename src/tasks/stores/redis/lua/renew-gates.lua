-- renew-gates.lua: extends holds of slot gates that are still there (their tasks still run).
--
-- KEYS[i]   a slot gate
-- ARGV[1]   the new lease end (epoch ms)
-- ARGV[2]   now (epoch ms): expiries are set relative to the caller's clock
-- ARGV[2+i] the holder of KEYS[i]
--
-- Returns the number of holds extended.

local lease = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local renewed = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  local current = redis.call('ZSCORE', key, ARGV[2 + i])
  if current and tonumber(current) < lease then
    redis.call('ZADD', key, lease, ARGV[2 + i])
    renewed = renewed + 1
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    redis.call('PEXPIRE', key, math.max(1, tonumber(last[2]) - now + 1))
  end
end
return renewed
