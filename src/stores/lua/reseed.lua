-- reseed.lua: refills a Redis that lost its data (restarted without persistence, flushed) from
-- one instance's replica, then sets the store's marker key, as one atomic step.
--
-- A namespace (the route store's records, flags, rate-limit policies) is written only when the
-- contributing instance has seen a newer write than the namespace's counter now holds: when
-- several instances re-seed at once the one that saw the newest version wins, and an instance
-- that comes late never overwrites writes made after the re-seed (they raised the counter).
--
-- KEYS[1]    the marker key
-- KEYS[2..]  per namespace: its version counter, then its containers, in ARGV's order
-- ARGV[1]    the marker value to set when the marker is missing
-- ARGV[2]    number of namespaces
-- then per namespace:
--   position, number of containers, and per container:
--     kind ("hash" | "string"), number of entries, then field/value pairs (the field of a
--     "string" container is ignored)
--
-- Returns { marker value in force, records written, namespaces written }.

local k = 2
local a = 3
local written = 0
local namespaces = 0
for _ = 1, tonumber(ARGV[2]) do
  local seq_key = KEYS[k]
  k = k + 1
  local position = tonumber(ARGV[a])
  local containers = tonumber(ARGV[a + 1])
  a = a + 2
  local current = tonumber(redis.call('GET', seq_key) or '0') or 0
  local apply = position > current
  if apply then
    namespaces = namespaces + 1
    redis.call('SET', seq_key, position)
  end
  for _ = 1, containers do
    local key = KEYS[k]
    k = k + 1
    local kind = ARGV[a]
    local entries = tonumber(ARGV[a + 1])
    a = a + 2
    if apply then
      redis.call('DEL', key)
    end
    for _ = 1, entries do
      if apply then
        if kind == 'string' then
          redis.call('SET', key, ARGV[a + 1])
        else
          redis.call('HSET', key, ARGV[a], ARGV[a + 1])
        end
        written = written + 1
      end
      a = a + 2
    end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return { redis.call('GET', KEYS[1]), written, namespaces }
