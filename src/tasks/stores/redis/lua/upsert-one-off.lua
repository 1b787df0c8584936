-- upsert-one-off.lua: places a one-off entry, replacing one with the same run key and dropping
-- its claim (a fresh entry, a fresh claim).
--
-- KEYS[1]  the entry's hash
-- KEYS[2]  the due set (run time → run key)
-- ARGV[1]  run key
-- ARGV[2]  run time (epoch ms)
-- ARGV[3]  JSON body
--
-- Returns 1.

redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'run_at', ARGV[2], 'body', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
