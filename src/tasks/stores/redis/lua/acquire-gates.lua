-- acquire-gates.lua: decides one task start against the gates of its queue, atomically: every
-- slot gate must have a free place and every rate gate room in its moving window; then the
-- start takes a place in each slot gate and is counted in each rate gate. When any gate
-- refuses, nothing changes. Mirrors `decideAcquire` (src/tasks/groups/gate-rules.ts).
--
-- A slot gate is a sorted set of holders scored by lease end (a holder whose lease ended before
-- `now` no longer counts); a rate gate is a sorted set of starts scored by their time (starts
-- at or before `now - period` have left the window).
--
-- Before deciding, it gives up the holds the caller releases in the same call (a task of the
-- group that just ended): the place freed and the next start cost one round trip, not two.
-- They are given up whether or not the start is allowed.
--
-- KEYS[1..R]          the slot gates of the released holds
-- KEYS[R+1..R+S]      the slot gates
-- KEYS[R+S+1..]       the rate gates
-- ARGV[1]             the holder (task id)
-- ARGV[2]             lease end of its holds (epoch ms)
-- ARGV[3]             now (epoch ms)
-- ARGV[4]             S, the number of slot gates
-- ARGV[5]             R, the number of released holds
-- ARGV[6..5+R]        each released hold's holder
-- ARGV[6+R..5+R+S]    each slot gate's limit
-- ARGV[6+R+S..]       each rate gate's count and period (ms), in pairs
-- ARGV[#]             the caller's wall clock when it sent the call (epoch ms), or -1 for none
--
-- Returns { 1, -1 } when allowed; { 0, retry-after ms } when a rate gate refuses (the longest
-- wait); { 0, -1 } when only a slot gate is full.

local holder = ARGV[1]
local lease = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
-- A call may wait behind other commands of its connection: its start is counted when it is
-- decided, not when it was sent, or the next window would open early by as much. The wait is
-- read from the server's clock against the caller's; a skew outside 0..10 s is ignored.
local time = redis.call('TIME')
local waited = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) - tonumber(ARGV[#ARGV])
if tonumber(ARGV[#ARGV]) >= 0 and waited > 0 and waited < 10000 then
  now = now + waited
  lease = lease + waited
end
local slots = tonumber(ARGV[4])
local released = tonumber(ARGV[5])
for i = 1, released do
  redis.call('ZREM', KEYS[i], ARGV[5 + i])
end
local full = false
for i = 1, slots do
  local key = KEYS[released + i]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. now)
  local count = redis.call('ZCARD', key)
  if redis.call('ZSCORE', key, holder) then count = count - 1 end
  if count >= tonumber(ARGV[5 + released + i]) then full = true end
end
local retry = -1
local first = released + slots + 1
for i = first, #KEYS do
  local key = KEYS[i]
  local at = 6 + released + slots + (i - first) * 2
  local limit = tonumber(ARGV[at])
  local period = tonumber(ARGV[at + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
  local count = redis.call('ZCARD', key)
  if count >= limit then
    -- The start fits again once enough of the oldest starts have left the window.
    local freeing = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
    local wait = math.max(1, tonumber(freeing[2]) + period - now)
    if wait > retry then retry = wait end
  end
end
if full or retry >= 0 then return { 0, retry } end
for i = 1, slots do
  local key = KEYS[released + i]
  redis.call('ZADD', key, lease, holder)
  -- Relative to the caller's `now`: its clock, not the server's, says when leases end.
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(1, tonumber(last[2]) - now + 1))
end
for i = first, #KEYS do
  local key = KEYS[i]
  local at = 6 + released + slots + (i - first) * 2
  redis.call('ZADD', key, now, holder .. ':' .. now)
  redis.call('PEXPIRE', key, tonumber(ARGV[at + 1]) + 1)
end
return { 1, -1 }
