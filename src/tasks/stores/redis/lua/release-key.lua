-- release-key.lua: compare-and-delete: deletes an idempotency key only when the given task
-- holds it.
--
-- KEYS[1]  the idempotency key
-- ARGV[1]  the task id expected to hold it
--
-- Returns 1 when deleted, else 0.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
