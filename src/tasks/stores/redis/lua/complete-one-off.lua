-- complete-one-off.lua: marks a fired one-off entry done (deletes it) if the claim token still
-- holds it, so a replaced or re-claimed entry is never removed by a stale claimer.
--
-- KEYS[1]  the entry's hash
-- KEYS[2]  the due set
-- ARGV[1]  run key
-- ARGV[2]  claim token
--
-- Returns 1 when done, else 0.

if redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
