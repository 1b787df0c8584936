-- take-over-slot.lua: hands an unconfirmed claim made before a cut-off to a new owner, as made
-- now, so that exactly one instance fires a slot whose claimer died before enqueueing it.
--
-- KEYS[1]  the slot's key (holds the owner)
-- KEYS[2]  the schedule's unconfirmed index
-- ARGV[1]  new owner
-- ARGV[2]  slot time (the unconfirmed index's member)
-- ARGV[3]  stale before (epoch ms): only claims made earlier are taken over
-- ARGV[4]  now (epoch ms)
--
-- Returns 1 when taken over, else 0 (confirmed, fresh, or pruned).

local claimed = redis.call('ZSCORE', KEYS[2], ARGV[2])
if not claimed or tonumber(claimed) >= tonumber(ARGV[3]) then
  return 0
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
return 1
