-- save-flow.lua: writes flow nodes exactly as save-tasks.lua does (its text is included below,
-- as the function saveTasks) and, in the same atomic step, keeps the flow counters: hash
-- flow:<parent> (flow, parent, waiting, failed), the flow index idx:flow:<root> (by creation
-- time) and the set flows:failing of parents with a failed child. A new node's root and parent
-- are fields of its record's hash (flow, parent), written by the record's own HSET; only a
-- parent has a flow hash (earlier releases gave every node one, and its fields: the readers
-- fall back to it).
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV     the arguments of save-tasks.lua, then the flow operations, then their count C
--          (the last argument): C strings in groups of 5: kind, task id, parent id, a, b.
--   node    (before the rows) a new node: a = flow root, b = "created_ms children"; a node
--           with 0 children (a leaf) gets no flow hash
--   leaves  (before) new leaves of one parent, records first to first + n - 1 of this call
--           (their ids and creation times are in their rows): a = flow root, b = "first n";
--           no task id (a run of a thousand leaves is 5 arguments, not 5,000)
--   done    (before) the task ends with success: a = "1", else a = "0"; counted only when the
--           task's stored status is pending or running
--   retry   (before) a new retry record: counts the parent's failed down when the task is new
--   rewait  (before) a failed parent waits again: counts its parent's failed down
--   hold    (after) the task takes the flow hold
--   release (after) the parent is released when its counters are both 0 and it is held
--   guard   (first) the compare-and-set of ending a waiting parent: only when the task is
--           pending and held by the flow hold or claimed by nobody does anything happen (its
--           claim is dropped, then the rest runs); else nothing is written
--
-- Returns the number of records written, or -1 when a guard did not hold.

local count = tonumber(table.remove(ARGV))
local flowOps = {}
for i = 1, count do flowOps[count - i + 1] = table.remove(ARGV) end

local fp = ARGV[1]
local HOLD, HOLD_LEASE = 'switchyard:flow-waiting', '8000000000000000'
local live = { pending = true, running = true }
local unsuccessful = { failed = true, cancelled = true, interrupted = true, expired = true, rejected = true }

-- Counter changes are summed per (parent, field) and each applied once: a batch of a thousand
-- children of one parent changes its hash once, not a thousand times.
local deltas, deltaOrder = {}, {}
local flowIndex, flowOrder = {}, {}
-- The root and parent of each new node, written with its record (see save-tasks.lua).
local nodeFields = {}
-- The members (score, id, ...) a flow's index gains.
local function indexOf(root)
  local members = flowIndex[root]
  if not members then
    members = {}
    flowIndex[root] = members
    flowOrder[#flowOrder + 1] = root
  end
  return members
end
-- A run of leaves: the place of each one's row in ARGV (groups of 8 from 5).
local function eachLeaf(b, fn)
  local first, n = string.match(b, '(%S+) (%S+)')
  first = tonumber(first)
  for k = first, first + tonumber(n) - 1 do fn(5 + (k - 1) * 8) end
end
local function bump(parent, field, amount)
  local key = parent .. '\n' .. field
  if deltas[key] == nil then
    deltas[key] = 0
    deltaOrder[#deltaOrder + 1] = { parent, field, key }
  end
  deltas[key] = deltas[key] + amount
end

local function applyBumps()
  for _, entry in ipairs(deltaOrder) do
    local parent, field, amount = entry[1], entry[2], deltas[entry[3]]
    local key = fp .. 'flow:' .. parent
    if amount ~= 0 and redis.call('EXISTS', key) == 1 then
      local value = redis.call('HINCRBY', key, field, amount)
      if field == 'failed' then
        if value > 0 then
          redis.call('SADD', fp .. 'flows:failing', parent)
        else
          redis.call('SREM', fp .. 'flows:failing', parent)
        end
      end
    end
  end
end

for i = 1, #flowOps, 5 do
  if flowOps[i] == 'guard' then
    local key = fp .. 'task:' .. flowOps[i + 1]
    local task = redis.call('HMGET', key, 'status', 'claimed_by')
    if task[1] ~= 'pending' or (task[2] and task[2] ~= '' and task[2] ~= HOLD) then return -1 end
  end
end
for i = 1, #flowOps, 5 do
  if flowOps[i] == 'guard' then
    redis.call('HSET', fp .. 'task:' .. flowOps[i + 1], 'claimed_by', '', 'lease_until', '')
  end
end

for i = 1, #flowOps, 5 do
  local kind, id, parent, a, b = flowOps[i], flowOps[i + 1], flowOps[i + 2], flowOps[i + 3], flowOps[i + 4]
  -- A new node needs no stored status (one read less per node of a new tree).
  local status = kind ~= 'node' and kind ~= 'leaves' and redis.call('HGET', fp .. 'task:' .. id, 'status')
  if kind == 'leaves' then
    local members = indexOf(a)
    local shared = { 'flow', a, 'parent', parent }
    eachLeaf(b, function(at)
      members[#members + 1] = ARGV[at + 4]
      members[#members + 1] = ARGV[at]
      nodeFields[ARGV[at]] = shared
    end)
  elseif kind == 'node' then
    nodeFields[id] = { 'flow', a, 'parent', parent }
    local key = fp .. 'flow:' .. id
    local created, children = string.match(b, '(%S+) (%S+)')
    -- A leaf needs no counters; a parent's are made once (a repeated write changes nothing).
    if children == '0' or redis.call('EXISTS', key) == 0 then
      if children ~= '0' then
        redis.call('HSET', key, 'flow', a, 'parent', parent, 'waiting', children, 'failed', 0)
      end
      local members = indexOf(a)
      members[#members + 1] = created
      members[#members + 1] = id
    end
  elseif kind == 'done' then
    if status and live[status] then
      if a == '1' then bump(parent, 'waiting', -1) else bump(parent, 'failed', 1) end
    end
  elseif kind == 'retry' then
    if not status then bump(parent, 'failed', -1) end
  elseif kind == 'rewait' then
    if status and unsuccessful[status] then bump(parent, 'failed', -1) end
  end
end

applyBumps()
-- New nodes join their flow's index in one ZADD per flow (in pieces unpack can take).
for _, root in ipairs(flowOrder) do
  local members = flowIndex[root]
  for i = 1, #members, 4000 do
    redis.call('ZADD', fp .. 'idx:flow:' .. root, unpack(members, i, math.min(i + 3999, #members)))
  end
end

local function saveTasks()
--@save-tasks
end

local written = saveTasks()

for i = 1, #flowOps, 5 do
  local kind, id = flowOps[i], flowOps[i + 1]
  local key = fp .. 'task:' .. id
  if kind == 'hold' then
    redis.call('HSET', key, 'claimed_by', HOLD, 'lease_until', HOLD_LEASE)
  elseif kind == 'release' then
    local counters = redis.call('HMGET', fp .. 'flow:' .. id, 'waiting', 'failed')
    local task = redis.call('HMGET', key, 'status', 'claimed_by')
    if counters[1] and tonumber(counters[1]) <= 0 and tonumber(counters[2]) <= 0
      and task[1] == 'pending' and task[2] == HOLD then
      redis.call('HSET', key, 'claimed_by', '', 'lease_until', '')
    end
  end
end
return written
