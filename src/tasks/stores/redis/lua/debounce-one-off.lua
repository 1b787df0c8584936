-- debounce-one-off.lua: places a debounced one-off entry. An entry with the same run key that
-- nobody has claimed (its task has not started) keeps its task id and takes the new arguments
-- and run time; otherwise (none, or one claimed for firing) the entry is placed with the new
-- task id and without a claim.
--
-- KEYS[1]  the entry's hash
-- KEYS[2]  the due set (run time → run key)
-- ARGV[1]  run key
-- ARGV[2]  run time (epoch ms)
-- ARGV[3]  the JSON body without task_id and without its closing brace
-- ARGV[4]  the new task id
--
-- Returns the task id the entry holds.

local f = redis.call('HMGET', KEYS[1], 'claimed_by', 'task_id')
local id = ARGV[4]
if f[2] and not f[1] then id = f[2] end
redis.call('DEL', KEYS[1])
local body = ARGV[3] .. ',"task_id":' .. cjson.encode(id) .. '}'
redis.call('HSET', KEYS[1], 'run_at', ARGV[2], 'body', body, 'task_id', id)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return id
