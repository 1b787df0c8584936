-- release-tasks.lua: gives up an owner's claim on some records (only where it still holds it).
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  owner
-- ARGV[3..] task ids
--
-- Returns the number of released records.

local p, owner = ARGV[1], ARGV[2]
local n = 0
for i = 3, #ARGV do
  local key = p .. 'task:' .. ARGV[i]
  if redis.call('HGET', key, 'claimed_by') == owner then
    redis.call('HDEL', key, 'claimed_by', 'lease_until')
    n = n + 1
  end
end
-- The ids leave the owner's set in one command per 1,000 (what unpack takes at once).
for i = 3, #ARGV, 1000 do
  redis.call('SREM', p .. 'owner:' .. owner, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return n
