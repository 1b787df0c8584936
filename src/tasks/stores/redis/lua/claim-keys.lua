-- claim-keys.lua: insert-if-absent of many idempotency keys in one atomic step.
--
-- KEYS[i]  an idempotency key
-- ARGV[i]  the task id that claims KEYS[i]
--
-- Returns, per key in order, the id of the task holding it afterwards (ARGV[i] where the claim
-- won, the existing holder elsewhere).

local holders = {}
for i = 1, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if not holder then
    redis.call('SET', KEYS[i], ARGV[i])
    holder = ARGV[i]
  end
  holders[i] = holder
end
return holders
