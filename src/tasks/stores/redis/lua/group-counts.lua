-- group-counts.lua: counts the pending and running records of one queue per group, reading
-- each record's queue field and, for the queue's records, the group in its JSON body. Reads at
-- most ARGV[3] records of each status (the oldest ones), so one call never holds the server for
-- long.
--
-- KEYS     none (key names derive from ARGV[1]; the store targets one Redis, not a cluster)
-- ARGV[1]  key prefix
-- ARGV[2]  queue name
-- ARGV[3]  most records read per status
--
-- Returns { partial (0 or 1), group, waiting, running, group, waiting, running, ... } where the
-- group of ungrouped records is "" (a group name is never empty).

local p = ARGV[1]
local queue = ARGV[2]
local limit = tonumber(ARGV[3])
local counts, order = {}, {}
local partial = 0

for _, status in ipairs({ 'pending', 'running' }) do
  local ids = redis.call('ZRANGE', p .. 'idx:status:' .. status, 0, limit)
  if #ids > limit then partial = 1 end
  for i = 1, math.min(#ids, limit) do
    local key = p .. 'task:' .. ids[i]
    local fields = redis.call('HMGET', key, 'queue', 'body')
    if fields[1] == queue and fields[2] then
      local ok, task = pcall(cjson.decode, fields[2])
      local group = ''
      if ok and type(task) == 'table' and type(task.record) == 'table' and type(task.record.group) == 'string' then
        group = task.record.group
      end
      local count = counts[group]
      if not count then
        count = { 0, 0 }
        counts[group] = count
        order[#order + 1] = group
      end
      if status == 'pending' then count[1] = count[1] + 1 else count[2] = count[2] + 1 end
    end
  end
end

local result = { partial }
for _, group in ipairs(order) do
  local count = counts[group]
  result[#result + 1] = group
  result[#result + 1] = count[1]
  result[#result + 1] = count[2]
end
return result
