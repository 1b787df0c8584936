-- claim-tasks.lua: atomically claims up to N records of one status that nobody holds (no
-- claim, or a lease that ended before "now"), oldest first. Used for the pending queue and for
-- orphaned running tasks. Records of functions outside the allowed list are left untouched.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV[1]  key prefix
-- ARGV[2]  status to claim ("pending" or "running")
-- ARGV[3]  owner
-- ARGV[4]  lease end (epoch ms)
-- ARGV[5]  now (epoch ms)
-- ARGV[6]  limit
-- ARGV[7]  "1" to restrict to the function names in ARGV[8..], "0" for any function
--
-- Returns the JSON bodies of the claimed records.

local p, status, owner, lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, limit, restrict = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1'
local allowed = {}
for i = 8, #ARGV do allowed[ARGV[i]] = true end
local claimed, won = {}, {}
local offset, scanned = 0, 0
while #claimed < limit and scanned < 20000 do
  local ids = redis.call('ZRANGE', p .. 'idx:status:' .. status, offset, offset + 199)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local key = p .. 'task:' .. id
    -- The body is read only for a record won: most records a busy queue's scan passes over
    -- are held, and a body is the one large field.
    local f = redis.call('HMGET', key, 'claimed_by', 'lease_until', 'func')
    local free = (not f[1]) or f[1] == '' or tonumber(f[2]) < now
    if free and ((not restrict) or allowed[f[3]]) then
      redis.call('HSET', key, 'claimed_by', owner, 'lease_until', lease)
      claimed[#claimed + 1] = redis.call('HGET', key, 'body')
      won[#won + 1] = id
      if #claimed >= limit then break end
    end
  end
  offset = offset + #ids
  scanned = scanned + #ids
end
-- The owner's set gets the claimed ids in one command per 1,000 (what unpack takes at once).
for i = 1, #won, 1000 do
  redis.call('SADD', p .. 'owner:' .. owner, unpack(won, i, math.min(i + 999, #won)))
end
return claimed
