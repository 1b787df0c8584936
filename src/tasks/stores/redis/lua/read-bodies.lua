-- read-bodies.lua: the stored body of each task, in the order asked, in one round trip (a list
-- page of 500 records is one call instead of 500).
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV     the key prefix, then the task ids
--
-- Returns one entry per id: the body, or nil where the record is gone.

local fp = ARGV[1]
local bodies = {}
for i = 2, #ARGV do
  bodies[i - 1] = redis.call('HGET', fp .. 'task:' .. ARGV[i], 'body')
end
return bodies
