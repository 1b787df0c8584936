-- difference.lua: the members of one sorted-set index that are not in another, into a temporary
-- key that expires on its own, in one atomic step (see intersect.lua).
--
-- KEYS[1]  the temporary destination key
-- KEYS[2]  the index to keep members of (scores: creation time)
-- KEYS[3]  the index of the members to leave out
-- ARGV[1]  time to live of the destination, in ms
--
-- Returns the number of members of the destination.

local n = redis.call('ZDIFFSTORE', KEYS[1], 2, KEYS[2], KEYS[3])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
