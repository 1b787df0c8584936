-- save-tasks.lua: inserts or replaces task records and keeps every index consistent in one
-- atomic step: the status/function/queue sorted sets by creation time, the finished-time set
-- that retention scans, the per-(function, status) counters (live counts), the id and tag
-- indexes of new records, the index of retried records (idx:retried, by creation time), the metric buckets of records that become terminal, and one entry of
-- the change stream.
--
-- KEYS     the store's routing key only (key names derive from ARGV[1], all in one slot)
-- ARGV[1]  key prefix
-- ARGV[2]  claim owner, or "" to leave any existing claim as it is
-- ARGV[3]  lease end (epoch ms) when ARGV[2] is set
-- ARGV[4]  origin of the write (the change stream's "o")
-- ARGV[5..] groups of 8: task_id, status, func_name, queue, created_ms, tag hashes
--          (space-separated, "" for none), JSON body, and the rest: "" for a record with no
--          end, no duration, no idempotency key and not retried (a new pending record), else
--          finished_ms ("" while live), duration (seconds), duration bin, "1" when the record
--          was retried (else ""), idempotency key ("" for none), joined by tabs (the key last,
--          so that it may hold tabs). Every argument costs Redis ~1.2k instructions to read and
--          make a Lua string of, so the four that a new pending record leaves at their
--          defaults travel as one empty one. A task id appears at most once per call.
--
-- Metric buckets: hash m:<minute> (and m:total for all time) with fields
-- "n\n<func>\n<status>\n<bin>" (count) and "d\n<func>\n<status>\n<bin>" (duration sum); sorted
-- set m:minutes lists the minutes.
--
-- Each record costs one command (its hash, written once), and a second (its old state) only
-- when some record of the call is already stored: one EXISTS over the call's keys tells, so a
-- call of new records (an enqueue) reads nothing per record. The index, counter and metric
-- changes of the whole call are gathered and sent as few commands per key as possible (a
-- sorted set gets its members in one ZADD, or one per long run; see below), since
-- per-command overhead, not the work on each key, was most of a write's server time. With
-- every task id once, each (key, member) is either added or removed, so the order of the
-- gathered commands does not matter.
--
-- Returns the number of records written.

local p = ARGV[1]
local owner = ARGV[2]
local lease = ARGV[3]
local origin = ARGV[4]
local terminal = { success = true, failed = true, cancelled = true, interrupted = true, rejected = true, expired = true }

local adds, addOrder = {}, {}
local removes, removeOrder = {}, {}
local increments, incrementOrder = {}, {}

-- The list of `key` in `groups`, made (and its key's turn remembered) on first use. Each list
-- keeps its length in `n`, so appending neither measures it nor builds a table of arguments.
local function listOf(groups, order, key)
  local list = groups[key]
  if not list then
    list = { n = 0 }
    groups[key] = list
    order[#order + 1] = key
  end
  return list
end

-- Appends one member to a list of `listOf`.
local function append(list, score, id)
  local n = list.n
  list[n + 1] = score
  list[n + 2] = id
  list.n = n + 2
end

local function zadd(key, score, id) append(listOf(adds, addOrder, key), score, id) end

local function zrem(key, id)
  local list = listOf(removes, removeOrder, key)
  local n = list.n + 1
  list[n] = id
  list.n = n
end

-- Counts (integers) and duration sums (floats) to add to hash fields, summed per field.
local function incr(key, field, amount, float)
  local fields = increments[key]
  if not fields then
    fields = { float = {}, int = {}, order = {} }
    increments[key] = fields
    incrementOrder[#incrementOrder + 1] = key
  end
  local kind = float and fields.float or fields.int
  if kind[field] == nil then
    kind[field] = 0
    fields.order[#fields.order + 1] = { field, float }
  end
  kind[field] = kind[field] + amount
end

-- Sends members `first`..`last` of `list` to `command key ...`, in pieces unpack can take.
local function sendSlice(command, key, list, first, last)
  for i = first, last, 4000 do
    redis.call(command, key, unpack(list, i, math.min(i + 3999, last)))
  end
end

-- Sends `args` (ARGV-style, flat; its length in `args.n`, else measured) to
-- `command key ...`.
local function send(command, key, args) sendSlice(command, key, args, 1, args.n or #args) end

-- Key names and counter fields, built once per distinct value: most records of a call share
-- their status, function and queue, and a concatenation makes (and hashes) a new string.
local function memo(build)
  local cache = {}
  return function(value)
    local name = cache[value]
    if not name then
      name = build(value)
      cache[value] = name
    end
    return name
  end
end
local taskKey = p .. 'task:'
local allKey, idKey, finishedKey = p .. 'idx:all', p .. 'idx:id', p .. 'idx:finished'
local retriedKey, countKey, durationKey = p .. 'idx:retried', p .. 'agg:count', p .. 'agg:duration'
local statusKey = memo(function(v) return p .. 'idx:status:' .. v end)
local funcKey = memo(function(v) return p .. 'idx:func:' .. v end)
local queueKey = memo(function(v) return p .. 'idx:queue:' .. v end)
local tagKey = memo(function(v) return p .. 'idx:tag:' .. v end)
local cells = {}
local function cellOf(func, status)
  local byStatus = cells[func]
  if not byStatus then
    byStatus = {}
    cells[func] = byStatus
  end
  local cell = byStatus[status]
  if not cell then
    cell = func .. '\n' .. status
    byStatus[status] = cell
  end
  return cell
end

-- The HSET arguments of a record, one table reused: the names at odd places stay put.
local fields = { 'status', '', 'func', '', 'queue', '', 'duration', '', 'body', '' }
-- Fields written with some records, by id ({ name, value, name, value }): none here; where
-- save-flow.lua includes this text, a flow node's root and parent (it replaces this line).
local extraFields = {}

-- Metric buckets by minute, and a cell's two field names (count, duration sum), built once.
local minuteKeys, totalKey = {}, p .. 'm:total'
local metricFields = memo(function(cell) return { 'n\n' .. cell, 'd\n' .. cell } end)

-- Every record enters idx:all and the sets of its status, function and queue with the same
-- member (creation time, id), so those three get slices of idx:all's list rather than lists of
-- their own: consecutive records with one status (function, queue) form a run, and a run ends
-- when the value changes. A long run is sent as it is (one ZADD from the slice); a short one is
-- copied into its key's list, sent once at the end. Callers sort a call's records by status,
-- function and queue (an enqueue of one function is a single run of each), so that building
-- three more lists per record, the larger part of this script's own work, is mostly skipped.
local allList = listOf(adds, addOrder, allKey)
local idList
-- List places (two per record) from which a run is sent as a slice: 32 records.
local LONG_RUN_PLACES = 64
local runKeys = { statusKey, funcKey, queueKey }
local runValues, runStarts = {}, { 1, 1, 1 }

-- Ends run `d` (1 status, 2 function, 3 queue) before list place `stop` + 1.
local function endRun(d, stop)
  local value, first = runValues[d], runStarts[d]
  if value == nil or stop < first then return end
  local key = runKeys[d](value)
  if stop - first + 1 >= LONG_RUN_PLACES then
    sendSlice('ZADD', key, allList, first, stop)
  else
    local list = listOf(adds, addOrder, key)
    local n = list.n
    for j = first, stop do list[n + j - first + 1] = allList[j] end
    list.n = n + stop - first + 1
  end
end

-- Starts a new run of `d` at record value `value` when it differs from the current one.
local function follow(d, value)
  if value ~= runValues[d] then
    endRun(d, allList.n)
    runValues[d], runStarts[d] = value, allList.n + 1
  end
end

-- The records' keys, and whether any of them exists: one EXISTS for the whole call, so that a
-- call of new records only (an enqueue) reads no old state record by record.
local keys = {}
for i = 5, #ARGV, 8 do keys[#keys + 1] = taskKey .. ARGV[i] end
local anyStored = false
for i = 1, #keys, 4000 do
  if redis.call('EXISTS', unpack(keys, i, math.min(i + 3999, #keys))) > 0 then
    anyStored = true
    break
  end
end
local none = {}

local ids, written = {}, 0
for i = 5, #ARGV, 8 do
  local id, status, func, queue = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local created, tags, body, rest = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
  local finished, duration, bin, retried, idem = '', '0', '', '', ''
  if rest ~= '' then
    finished, duration, bin, retried, idem =
      string.match(rest, '^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$')
  end
  local key = keys[written + 1]
  local seconds = tonumber(duration)
  local old = anyStored and redis.call('HMGET', key, 'status', 'func', 'queue', 'duration') or none
  follow(1, status)
  follow(2, func)
  follow(3, queue)
  if old[1] then
    if old[1] ~= status then zrem(statusKey(old[1]), id) end
    if old[2] ~= func then zrem(funcKey(old[2]), id) end
    if old[3] ~= queue then zrem(queueKey(old[3]), id) end
    incr(countKey, cellOf(old[2], old[1]), -1, false)
    local oldDuration = tonumber(old[4])
    if oldDuration ~= 0 then
      incr(durationKey, cellOf(old[2], old[1]), -oldDuration, true)
    end
  else
    idList = idList or listOf(adds, addOrder, idKey)
    append(idList, 0, id)
    if tags ~= '' then
      if not string.find(tags, ' ', 1, true) then
        zadd(tagKey(tags), created, id)
      else
        for hash in string.gmatch(tags, '%S+') do
          zadd(tagKey(hash), created, id)
        end
      end
    end
  end
  append(allList, created, id)
  -- A record is marked retried once and never unmarked.
  if retried == '1' then zadd(retriedKey, created, id) end
  local cell = cellOf(func, status)
  incr(countKey, cell, 1, false)
  if seconds ~= 0 then
    incr(durationKey, cell, seconds, true)
  end
  if finished == '' then
    if old[1] then zrem(finishedKey, id) end
  else
    zadd(finishedKey, finished, id)
    if terminal[status] and not (old[1] and terminal[old[1]]) then
      local minute = math.floor(tonumber(finished) / 60000) * 60000
      local bucket = minuteKeys[minute]
      if not bucket then
        local name = string.format('%.0f', minute)
        bucket = p .. 'm:' .. name
        minuteKeys[minute] = bucket
        zadd(p .. 'm:minutes', name, name)
      end
      local names = metricFields(cell .. '\n' .. bin)
      incr(bucket, names[1], 1, false)
      incr(bucket, names[2], seconds, true)
      incr(totalKey, names[1], 1, false)
      incr(totalKey, names[2], seconds, true)
    end
  end
  -- The hash is written in one HSET of only the fields something reads back: no creation
  -- time (the indexes hold it), and a new record leaves out an empty tag list and idempotency
  -- key (readers take a missing one as empty); a stored record gets them all again, so a value
  -- that became empty overwrites the old one.
  fields[2], fields[4], fields[6], fields[8], fields[10] = status, func, queue, duration, body
  local n = 10
  if old[1] or tags ~= '' then
    fields[n + 1], fields[n + 2] = 'tags', tags
    n = n + 2
  end
  if old[1] or idem ~= '' then
    fields[n + 1], fields[n + 2] = 'idem', idem
    n = n + 2
  end
  if owner ~= '' then
    fields[n + 1], fields[n + 2], fields[n + 3], fields[n + 4] = 'claimed_by', owner, 'lease_until', lease
    n = n + 4
  end
  local extra = extraFields[id]
  if extra then
    for j = 1, #extra do fields[n + j] = extra[j] end
    n = n + #extra
  end
  redis.call('HSET', key, unpack(fields, 1, n))
  written = written + 1
  ids[written] = id
end

for d = 1, 3 do endRun(d, allList.n) end
for _, key in ipairs(removeOrder) do send('ZREM', key, removes[key]) end
for _, key in ipairs(addOrder) do send('ZADD', key, adds[key]) end
for _, key in ipairs(incrementOrder) do
  local fields = increments[key]
  for _, entry in ipairs(fields.order) do
    local field, float = entry[1], entry[2]
    if float then
      local amount = fields.float[field]
      if amount ~= 0 then redis.call('HINCRBYFLOAT', key, field, amount) end
    else
      local amount = fields.int[field]
      if amount ~= 0 then redis.call('HINCRBY', key, field, amount) end
    end
  end
end
if owner ~= '' and written > 0 then send('SADD', p .. 'owner:' .. owner, ids) end
if written > 0 then
  redis.call('XADD', p .. 'changes', 'MAXLEN', '~', 10000, '*', 'o', origin, 'ids', table.concat(ids, ','))
end
return written
