--[[
  consume.lua — check and count the rate limits of a batch of requests, atomically, in one
  round trip. Mirrors src/rate-limit/algorithms.ts (the tests hold both to the same outcomes).

  The client batches the requests that arrive in the same event-loop turn; the requests are
  evaluated one after the other, in arrival order, exactly as separate calls would be.

  KEYS      the counter keys of every request, request after request; within a request in
            enforcement order (global, service, route); a fixed_window key ends with
            `:<window start ms>` (one key per window)
  ARGV[1]   a JSON array of non-negative integers (one argument for the whole batch: the client
            encodes each argument of a command separately, and cjson decodes the array in C,
            several times faster than matching the numbers one by one in Lua):
            R, the number of requests; K, the number of distinct rules; then K rules, four
            integers each:
                      algorithm  1 fixed_window | 2 sliding_window | 3 moving_window | 4 token_bucket
                      count      requests per period (integer >= 1)
                      period     period in milliseconds
                      burst      extra requests / extra bucket capacity (integer >= 0)
            then, per request:
            now       epoch milliseconds (the engine's clock at the request)
            n         the number of its limits (its next n KEYS)
            n indexes the rule of each limit, 1 to K (the requests of a batch mostly share their
                      rules, so a rule travels once per batch instead of once per limit)

  ARGV[2]   optional: `peek` evaluates without counting — nothing is written, and a limit that
            blocks does not end the request's evaluation (each limit answers on its own, for
            `engine.rateLimits.check`)

  A request's limits are evaluated in order: each allowed one is counted; the first that blocks
  is left untouched and ends that request's evaluation (its later limits are neither read nor
  written).

  Returns one string of comma-separated integers, 2 per evaluated limit, request after request:
            remaining (>= 0) when allowed, or -retry_after_ms (< 0) when blocked; reset_at (ms)
  (the effective limit is count + burst, known to the client, so it is not sent back). One bulk
  string rather than an array of integers: the client decodes it in one pass instead of one
  protocol element per number.

  Storage (every key expires with its window; TTLs are relative to the request's now, so clock
  skew between the application and Redis cannot expire a live counter early):
    fixed_window    string: the count of the window the key names
    sliding_window  hash s = window start, c = count, p = previous window's count
    moving_window   list of request timestamps, newest first
    token_bucket    hash t = tokens, u = last update (ms)
]]

local now = 0
local out = {}
local peeking = ARGV[2] == 'peek'

local function emit(allowed, effective, remaining, reset_at, retry)
  -- %d: exact integers whatever their size (tostring would switch to exponents past 14 digits)
  out[#out + 1] = string.format('%d,%d', allowed == 1 and remaining or -retry, reset_at)
  return allowed == 1
end

local function fixed_window(key, count, period, burst)
  -- the key names the window (`...:<window start>`), so a plain counter suffices
  local effective = count + burst
  local start = now - (now % period)
  local reset_at = start + period
  local current
  if peeking then
    current = (tonumber(redis.call('GET', key)) or 0) + 1
  else
    current = redis.call('INCR', key)
  end
  if current > effective then
    if not peeking then redis.call('DECR', key) end
    return emit(0, effective, 0, reset_at, reset_at - now)
  end
  if current == 1 and not peeking then redis.call('PEXPIRE', key, reset_at - now) end
  return emit(1, effective, effective - current, reset_at, 0)
end

local function sliding_window(key, count, period, burst)
  local effective = count + burst
  local start = now - (now % period)
  local state = redis.call('HMGET', key, 's', 'c', 'p')
  local stored_start = tonumber(state[1])
  local current, previous = 0, 0
  if stored_start == start then
    current = tonumber(state[2]) or 0
    previous = tonumber(state[3]) or 0
  elseif stored_start == start - period then
    previous = tonumber(state[2]) or 0
  end
  local elapsed = now - start
  local weighted = math.floor((previous * (period - elapsed)) / period) + current
  local reset_at = start + period
  if weighted >= effective then
    local retry
    if current >= effective then
      -- the full window becomes the previous one, whose weight drops below the limit 1 ms in
      retry = reset_at - now + 1
    else
      local needed = period - elapsed - ((effective - current) * period) / previous
      retry = math.max(1, math.floor(needed) + 1)
    end
    return emit(0, effective, 0, now + retry, retry)
  end
  if not peeking then
    redis.call('HSET', key, 's', start, 'c', current + 1, 'p', previous)
    redis.call('PEXPIRE', key, start + 2 * period - now)
  end
  return emit(1, effective, effective - weighted - 1, reset_at, 0)
end

local function peek_moving_window(key, effective, period, since)
  -- the newest `effective` stamps are all that decide; the live ones come first (newest first)
  local stamps = redis.call('LRANGE', key, 0, effective - 1)
  local length = 0
  for _, stamp in ipairs(stamps) do
    if tonumber(stamp) > since then length = length + 1 end
  end
  if length >= effective then
    local reset_at = tonumber(stamps[effective]) + period
    return emit(0, effective, 0, reset_at, math.max(1, reset_at - now))
  end
  local oldest = length == 0 and now or tonumber(stamps[length])
  return emit(1, effective, effective - length - 1, oldest + period, 0)
end

local function moving_window(key, count, period, burst)
  local effective = count + burst
  local since = now - period
  if peeking then return peek_moving_window(key, effective, period, since) end
  -- drop timestamps that left the window (oldest are at the tail)
  while true do
    local oldest = redis.call('LINDEX', key, -1)
    if not oldest or tonumber(oldest) > since then break end
    redis.call('RPOP', key)
  end
  local length = redis.call('LLEN', key)
  if length >= effective then
    -- the request fits once the effective-th newest stamp has left the window
    local freeing = tonumber(redis.call('LINDEX', key, effective - 1))
    local reset_at = freeing + period
    return emit(0, effective, 0, reset_at, math.max(1, reset_at - now))
  end
  redis.call('LPUSH', key, now)
  redis.call('PEXPIRE', key, period)
  local oldest = tonumber(redis.call('LINDEX', key, -1))
  return emit(1, effective, effective - length - 1, oldest + period, 0)
end

local function token_bucket(key, count, period, burst)
  local capacity = count + burst
  local rate = count / period
  local state = redis.call('HMGET', key, 't', 'u')
  local tokens = capacity
  if state[1] then
    local elapsed = math.max(0, now - tonumber(state[2]))
    tokens = math.min(capacity, tonumber(state[1]) + elapsed * rate)
  end
  if tokens < 1 then
    local retry = math.max(1, math.ceil((1 - tokens) / rate))
    return emit(0, capacity, 0, now + retry, retry)
  end
  local left = tokens - 1
  local full_at = now + math.ceil((capacity - left) / rate)
  if not peeking then
    -- %.17g keeps the fraction exact across the string round trip
    redis.call('HSET', key, 't', string.format('%.17g', left), 'u', now)
    redis.call('PEXPIRE', key, math.max(1, full_at - now))
  end
  return emit(1, capacity, math.floor(left), full_at, 0)
end

local algorithms = { fixed_window, sliding_window, moving_window, token_bucket }

local numbers = cjson.decode(ARGV[1])

-- Refuse a batch with a rule the script cannot store before writing anything: Redis keeps the
-- writes of a script that fails halfway, so an INCR followed by a PEXPIRE that errors (a period
-- too large to be an integer) would leave a counter without expiry. Limit strings are bounded to
-- one year when parsed; this holds the script to it whoever calls it.
local max_period = 31536000000
for r = 0, numbers[2] - 1 do
  local base = 3 + 4 * r
  local count, period, burst = numbers[base + 1], numbers[base + 2], numbers[base + 3]
  if not algorithms[numbers[base]] or period < 1 or period > max_period or period % 1 ~= 0
      or count < 1 or count % 1 ~= 0 or burst < 0 or burst % 1 ~= 0 then
    return redis.error_reply('ERR switchyard: invalid rate-limit rule (period must be 1 ms to one year)')
  end
end

local key_index = 1
local at = 3 + 4 * numbers[2] -- the first request, after R, K and the K rules
for _ = 1, numbers[1] do
  now = numbers[at]
  local n = numbers[at + 1]
  for i = 0, n - 1 do
    local rule = 3 + 4 * (numbers[at + 2 + i] - 1)
    if not algorithms[numbers[rule]](
        KEYS[key_index + i], numbers[rule + 1], numbers[rule + 2], numbers[rule + 3])
        and not peeking then
      break
    end
  end
  key_index = key_index + n
  at = at + 2 + n
end

return table.concat(out, ',')
