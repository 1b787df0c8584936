-- write-record.lua: stores or deletes one record, numbers the write and publishes it, as one
-- atomic step, so that the order of versions is the order of writes and of messages.
--
-- KEYS[1]  the record's container: a hash (route states, service maintenance) or a string key
--          (global maintenance)
-- KEYS[2]  the store's write counter (INCR)
-- ARGV[1]  operation: "hset" | "hdel" | "set"
-- ARGV[2]  hash field ("hset", "hdel"); ignored for "set"
-- ARGV[3]  the record as JSON ("hset", "set"); ignored for "hdel"
-- ARGV[4]  the change channel
-- ARGV[5]  origin: the id of the writing store instance (it ignores its own messages)
-- ARGV[6]  the change event as JSON, without its version
-- ARGV[7]  optional: "spublish" on a Redis Cluster (sharded pub/sub; the channel shares the
--          keys' slot through the prefix's hash tag), else the message goes out with PUBLISH
--
-- Returns the write's version, or 0 when "hdel" found nothing (then nothing is published).
-- Message published: "<version>|<origin>|<event JSON>".

local op = ARGV[1]
if op == 'hset' then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
elseif op == 'hdel' then
  if redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then
    return 0
  end
elseif op == 'set' then
  redis.call('SET', KEYS[1], ARGV[3])
else
  return redis.error_reply('unknown operation ' .. tostring(op))
end
local version = redis.call('INCR', KEYS[2])
redis.call(ARGV[7] == 'spublish' and 'SPUBLISH' or 'PUBLISH', ARGV[4], version .. '|' .. ARGV[5] .. '|' .. ARGV[6])
return version
