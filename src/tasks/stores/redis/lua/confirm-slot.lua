-- confirm-slot.lua: marks a slot's claim confirmed (its task is enqueued) while the given
-- owner holds it.
--
-- KEYS[1]  the slot's key (holds the owner)
-- KEYS[2]  the schedule's unconfirmed index
-- ARGV[1]  owner
-- ARGV[2]  slot time (the unconfirmed index's member)
--
-- Returns 1 when confirmed, else 0.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
return redis.call('ZREM', KEYS[2], ARGV[2])
