-- claim.lua: a one-time claim, granted to the first caller until it expires by the callers'
-- clock (so that a test's fake clock, like every instance's, decides when it has expired).
--
-- KEYS[1]  the claim key
-- ARGV[1]  now, epoch ms
-- ARGV[2]  when the claim expires, epoch ms (stored as the key's value)
-- ARGV[3]  how long Redis keeps the key, ms (only to reclaim memory)
--
-- Returns 1 when the claim is granted, 0 when another caller holds it.

local held = redis.call('GET', KEYS[1])
-- '1' is what earlier versions stored: held until Redis expires it.
if held and (held == '1' or tonumber(held) > tonumber(ARGV[1])) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
