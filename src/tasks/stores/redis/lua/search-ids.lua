-- search-ids.lua: the records a task-list query `q` matches — ids starting with `q` (the last
-- N by id: task ids start with their creation time, so the newest) and every record of the
-- function named `q` — into a temporary sorted set (score: creation time) that expires on its
-- own.
--
-- KEYS[1]  the temporary destination key
-- KEYS[2]  the id index (idx:id, all scores 0, ordered by id)
-- KEYS[3]  the creation-time index (idx:all)
-- KEYS[4]  the function index of `q` (idx:func:<q>)
-- ARGV[1]  q
-- ARGV[2]  most ids matched by prefix
-- ARGV[3]  time to live of the destination, in ms
--
-- Returns the number of members of the destination.

local ids = redis.call('ZREVRANGEBYLEX', KEYS[2], '[' .. ARGV[1] .. '\255', '[' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local created = redis.call('ZSCORE', KEYS[3], id)
  if created then redis.call('ZADD', KEYS[1], created, id) end
end
local n = redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[4], 'AGGREGATE', 'MIN')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return n
