-- replace-if.lua: compare-and-set of one route state. Stores the new state only when the
-- stored one still has the expected "since" (so a scheduled transition is persisted once, by
-- one instance, and never over a newer change), then numbers and publishes the write.
--
-- KEYS[1]  the route-state hash
-- KEYS[2]  the store's write counter (INCR)
-- ARGV[1]  hash field of the route
-- ARGV[2]  the expected "since" of the stored state
-- ARGV[3]  the new state as JSON
-- ARGV[4]  the change channel
-- ARGV[5]  origin: the id of the writing store instance
-- ARGV[6]  the change event as JSON, without its version
-- ARGV[7]  optional: "spublish" on a Redis Cluster (sharded pub/sub; the channel shares the
--          keys' slot through the prefix's hash tag), else the message goes out with PUBLISH
--
-- Returns the write's version, or 0 when nothing was stored.

local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then
  return 0
end
local ok, decoded = pcall(cjson.decode, current)
if not ok or type(decoded) ~= 'table' or decoded['since'] ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
local version = redis.call('INCR', KEYS[2])
redis.call(ARGV[7] == 'spublish' and 'SPUBLISH' or 'PUBLISH', ARGV[4], version .. '|' .. ARGV[5] .. '|' .. ARGV[6])
return version
