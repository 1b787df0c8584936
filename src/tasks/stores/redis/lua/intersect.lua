-- intersect.lua: intersects sorted-set indexes into a temporary key that expires on its own,
-- in one atomic step, so a client that dies before deleting it leaves nothing behind for long.
--
-- KEYS[1]   the temporary destination key
-- KEYS[2..] the indexes to intersect (scores: creation time; the minimum is kept)
-- ARGV[1]   time to live of the destination, in ms
--
-- Returns the number of members of the destination.

local command = { 'ZINTERSTORE', KEYS[1], #KEYS - 1 }
for i = 2, #KEYS do command[#command + 1] = KEYS[i] end
command[#command + 1] = 'AGGREGATE'
command[#command + 1] = 'MIN'
local n = redis.call(unpack(command))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
