-- claim-slot.lua: insert-if-absent of a periodic slot, unconfirmed, with its bookkeeping in
-- the same step (a crash can never leave a claim outside the indexes).
--
-- KEYS[1]  the slot's key (holds the owner)
-- KEYS[2]  the slots index (sorted set: member "<slot>:<schedule>", score the slot time)
-- KEYS[3]  the schedule's unconfirmed index (sorted set: member the slot time, score when
--          the claim was made)
-- ARGV[1]  owner
-- ARGV[2]  slot time (epoch ms)
-- ARGV[3]  slots-index member
-- ARGV[4]  when the claim is made (epoch ms)
--
-- Returns 1 when this call claimed the slot, else 0.

if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
return 1
