-- claim-one-off.lua: claims a due one-off entry that nobody holds (no claim, or a lease that
-- ended before "now"); exactly one racing caller wins.
--
-- KEYS[1]  the entry's hash
-- ARGV[1]  owner
-- ARGV[2]  lease end (epoch ms)
-- ARGV[3]  now (epoch ms)
-- ARGV[4]  the new claim token
--
-- Returns the entry's JSON body when claimed, else false (nil).

local f = redis.call('HMGET', KEYS[1], 'run_at', 'claimed_by', 'lease_until', 'body')
if not f[1] then return false end
local now = tonumber(ARGV[3])
if tonumber(f[1]) > now then return false end
if f[2] and tonumber(f[3]) >= now then return false end
redis.call('HSET', KEYS[1], 'claimed_by', ARGV[1], 'lease_until', ARGV[2], 'token', ARGV[4])
return f[4]
