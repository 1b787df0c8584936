-- create-task.lua: writes one new record exactly as save-tasks.lua does (its text is included
-- below), but only when no record with its id exists. The check and the write are one atomic
-- step, so of writers racing with one id exactly one writes: what a periodic schedule's slot
-- task is created with.
--
-- KEYS     none (key names derive from ARGV[1])
-- ARGV     the arguments of save-tasks.lua for one record
--
-- Returns 1 when the record was written, 0 when one with its id existed (nothing written).

if redis.call('EXISTS', ARGV[1] .. 'task:' .. ARGV[5]) == 1 then return 0 end
--@save-tasks
