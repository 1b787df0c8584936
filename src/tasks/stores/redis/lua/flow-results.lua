-- flow-results.lua: the bodies of the succeeded children of some parents in a flow, found
-- through the flow's index (idx:flow:<root>) and each node's parent (a field of its record's
-- hash, or of its flow hash for a node written before the field existed), so a released parent
-- reads its children's results without the rest of the flow's records.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV     the key prefix, the flow root, the offset and count of the slice of the flow's index
--          to look at, then the parent ids
--
-- Returns the number of index entries looked at, then a task id and its body per succeeded
-- child of one of the parents.

local fp, root = ARGV[1], ARGV[2]
local offset, count = tonumber(ARGV[3]), tonumber(ARGV[4])
local parents = {}
for i = 5, #ARGV do parents[ARGV[i]] = true end
local ids = redis.call('ZRANGE', fp .. 'idx:flow:' .. root, offset, offset + count - 1)
local found = { #ids }
for _, id in ipairs(ids) do
  local task = redis.call('HMGET', fp .. 'task:' .. id, 'parent', 'status')
  local parent = task[1] or redis.call('HGET', fp .. 'flow:' .. id, 'parent')
  if parent and parents[parent] and task[2] == 'success' then
    local body = redis.call('HGET', fp .. 'task:' .. id, 'body')
    if body then
      found[#found + 1] = id
      found[#found + 1] = body
    end
  end
end
return found
