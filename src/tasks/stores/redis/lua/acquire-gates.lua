-- acquire-gates.lua: decides task starts against the gates of their queues, one start after
-- the other in the order given; each is atomic, as if it ran alone: every slot gate must have a
-- free place and every rate gate room in its moving window; then the start takes a place in
-- each slot gate and is counted in each rate gate. When any gate refuses, that start changes
-- nothing. Mirrors `decideAcquire` (src/tasks/groups/gate-rules.ts). The starts asked for in
-- one event-loop turn share one call: one command, one socket write and one reply for them all.
--
-- A slot gate is a sorted set of holders scored by lease end (a holder whose lease ended before
-- `now` no longer counts); a rate gate is a sorted set of starts scored by their time (starts
-- at or before `now - period` have left the window).
--
-- Before deciding a start, it gives up the holds the caller releases with it (a task of the
-- group that just ended): the place freed and the next start cost one round trip, not two.
-- They are given up whether or not the start is allowed.
--
-- ARGV[1]             N, the number of starts
-- ARGV[2]             the caller's wall clock when it sent the call (epoch ms), or -1 for none
-- then, for each start, its arguments, and its keys in KEYS in the same order:
--   holder (task id), lease end of its holds (epoch ms), now (epoch ms), whether its clock is
--   the wall clock (1 or 0), S slot gates, R released holds, Q rate gates;
--   each released hold's holder (R), each slot gate's limit (S), each rate gate's count and
--   period in ms (Q pairs);
--   KEYS: the slot gates of the released holds (R), the slot gates (S), the rate gates (Q).
--
-- Returns two numbers per start: 1, -1 when allowed; 0, retry-after ms when a rate gate refuses
-- (the longest wait); 0, -1 when only a slot gate is full.

-- A call may wait behind other commands of its connection: its starts are counted when they are
-- decided, not when they were sent, or the next window would open early by as much. The wait is
-- read from the server's clock against the caller's; a skew outside 0..10 s is ignored.
local waited = 0
local wall = tonumber(ARGV[2])
if wall >= 0 then
  local time = redis.call('TIME')
  local elapsed = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) - wall
  if elapsed > 0 and elapsed < 10000 then waited = elapsed end
end

local result = {}
local a = 3
local k = 1
for _ = 1, tonumber(ARGV[1]) do
  local holder = ARGV[a]
  local lease = tonumber(ARGV[a + 1])
  local now = tonumber(ARGV[a + 2])
  if ARGV[a + 3] == '1' then
    now = now + waited
    lease = lease + waited
  end
  local slots = tonumber(ARGV[a + 4])
  local released = tonumber(ARGV[a + 5])
  local rates = tonumber(ARGV[a + 6])
  a = a + 7
  for i = 0, released - 1 do
    redis.call('ZREM', KEYS[k + i], ARGV[a + i])
  end
  a = a + released
  k = k + released
  -- ARGV[a + i - 1], KEYS[k + i - 1]: slot gate i; ARGV[a + slots + 2 (j - 1)], KEYS[k + slots +
  -- j - 1]: rate gate j.
  local full = false
  for i = 0, slots - 1 do
    local key = KEYS[k + i]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. now)
    local count = redis.call('ZCARD', key)
    if redis.call('ZSCORE', key, holder) then count = count - 1 end
    if count >= tonumber(ARGV[a + i]) then full = true end
  end
  local retry = -1
  for j = 0, rates - 1 do
    local key = KEYS[k + slots + j]
    local limit = tonumber(ARGV[a + slots + 2 * j])
    local period = tonumber(ARGV[a + slots + 2 * j + 1])
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
    local count = redis.call('ZCARD', key)
    if count >= limit then
      -- The start fits again once enough of the oldest starts have left the window.
      local freeing = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
      local wait = math.max(1, tonumber(freeing[2]) + period - now)
      if wait > retry then retry = wait end
    end
  end
  if full or retry >= 0 then
    result[#result + 1] = 0
    result[#result + 1] = retry
  else
    for i = 0, slots - 1 do
      local key = KEYS[k + i]
      redis.call('ZADD', key, lease, holder)
      -- Relative to the caller's `now`: its clock, not the server's, says when leases end.
      local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
      redis.call('PEXPIRE', key, math.max(1, tonumber(last[2]) - now + 1))
    end
    for j = 0, rates - 1 do
      local key = KEYS[k + slots + j]
      redis.call('ZADD', key, now, holder .. ':' .. now)
      redis.call('PEXPIRE', key, tonumber(ARGV[a + slots + 2 * j + 1]) + 1)
    end
    result[#result + 1] = 1
    result[#result + 1] = -1
  end
  a = a + slots + 2 * rates
  k = k + slots + rates
end
return result
