--[[
  consume.lua — check and count every rate limit of one request, atomically, in one round trip.
  Mirrors src/rate-limit/algorithms.ts (the tests hold both to the same outcomes).

  KEYS[i]   the counter key of the i-th limit, in enforcement order (global, service, route);
            for fixed_window it ends with `:<window start ms>` (one key per window)
  ARGV[1]   now, epoch milliseconds (the engine's clock)
  ARGV[1 + i]  the i-th limit's rule, packed as "<algorithm>,<count>,<period>,<burst>":
            algorithm  1 fixed_window | 2 sliding_window | 3 moving_window | 4 token_bucket
            count      requests per period (integer ≥ 1)
            period     period in milliseconds
            burst      extra requests / extra bucket capacity (integer ≥ 0)
            (one packed argument per limit keeps the command short on the client side)

  Limits are evaluated in order: each allowed one is counted; the first that blocks is left
  untouched and ends the evaluation (later ones are neither read nor written).

  Returns a flat array, 5 integers per evaluated limit:
            allowed (1|0), effective limit, remaining, reset_at (epoch ms), retry_after_ms

  Storage (every key expires with its window; TTLs are relative to ARGV[1], so clock skew
  between the application and Redis cannot expire a live counter early):
    fixed_window    string: the count of the window the key names
    sliding_window  hash s = window start, c = count, p = previous window's count
    moving_window   list of request timestamps, newest first
    token_bucket    hash t = tokens, u = last update (ms)
]]

local now = tonumber(ARGV[1])
local out = {}

local function emit(allowed, effective, remaining, reset_at, retry)
  out[#out + 1] = allowed
  out[#out + 1] = effective
  out[#out + 1] = remaining
  out[#out + 1] = reset_at
  out[#out + 1] = retry
  return allowed == 1
end

local function fixed_window(key, count, period, burst)
  -- the key names the window (`...:<window start>`), so a plain counter suffices
  local effective = count + burst
  local start = now - (now % period)
  local reset_at = start + period
  local current = redis.call('INCR', key)
  if current > effective then
    redis.call('DECR', key)
    return emit(0, effective, 0, reset_at, reset_at - now)
  end
  if current == 1 then redis.call('PEXPIRE', key, reset_at - now) end
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
  redis.call('HSET', key, 's', start, 'c', current + 1, 'p', previous)
  redis.call('PEXPIRE', key, start + 2 * period - now)
  return emit(1, effective, effective - weighted - 1, reset_at, 0)
end

local function moving_window(key, count, period, burst)
  local effective = count + burst
  local since = now - period
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
  -- %.17g keeps the fraction exact across the string round trip
  redis.call('HSET', key, 't', string.format('%.17g', left), 'u', now)
  redis.call('PEXPIRE', key, math.max(1, full_at - now))
  return emit(1, capacity, math.floor(left), full_at, 0)
end

local algorithms = { fixed_window, sliding_window, moving_window, token_bucket }

for i = 1, #KEYS do
  local algorithm, count, period, burst = string.match(ARGV[1 + i], '^(%d+),(%d+),(%d+),(%d+)$')
  local run = algorithms[tonumber(algorithm)]
  local allowed = run(KEYS[i], tonumber(count), tonumber(period), tonumber(burst))
  if not allowed then break end
end

return out
