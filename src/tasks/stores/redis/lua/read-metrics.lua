-- read-metrics.lua: the metric cells from a minute on, summed over the minutes ("sum") or per
-- minute ("series"), read server-side so a day of minutes costs one round trip.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  first minute (epoch ms)
-- ARGV[3]  "sum" or "series"
--
-- Returns a flat list: for "sum" field, value pairs (fields as in save-tasks.lua); for
-- "series" minute, field, value triples.

local p, first, mode = ARGV[1], ARGV[2], ARGV[3]
local minutes = redis.call('ZRANGEBYSCORE', p .. 'm:minutes', first, '+inf')
local out = {}
if mode == 'series' then
  for _, minute in ipairs(minutes) do
    local flat = redis.call('HGETALL', p .. 'm:' .. minute)
    for i = 1, #flat, 2 do
      out[#out + 1] = minute
      out[#out + 1] = flat[i]
      out[#out + 1] = flat[i + 1]
    end
  end
  return out
end
local sums, order = {}, {}
for _, minute in ipairs(minutes) do
  local flat = redis.call('HGETALL', p .. 'm:' .. minute)
  for i = 1, #flat, 2 do
    local field = flat[i]
    if sums[field] == nil then
      sums[field] = 0
      order[#order + 1] = field
    end
    sums[field] = sums[field] + tonumber(flat[i + 1])
  end
end
for _, field in ipairs(order) do
  out[#out + 1] = field
  out[#out + 1] = tostring(sums[field])
end
return out
