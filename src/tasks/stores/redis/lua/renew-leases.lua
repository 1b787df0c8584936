-- renew-leases.lua: extends the lease of every pending or running record an owner holds, and
-- forgets the owner's records that finished or were taken over.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  owner
-- ARGV[3]  new lease end (epoch ms)
--
-- Returns the number of renewed records.

local p, owner, lease = ARGV[1], ARGV[2], ARGV[3]
local set = p .. 'owner:' .. owner
local n = 0
for _, id in ipairs(redis.call('SMEMBERS', set)) do
  local f = redis.call('HMGET', p .. 'task:' .. id, 'status', 'claimed_by')
  if f[2] == owner and (f[1] == 'pending' or f[1] == 'running') then
    redis.call('HSET', p .. 'task:' .. id, 'lease_until', lease)
    n = n + 1
  else
    redis.call('SREM', set, id)
  end
end
return n
