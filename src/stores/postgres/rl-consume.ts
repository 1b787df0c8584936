/**
 * The PL/pgSQL function that checks and counts the rate limits of one request in one
 * statement: the PostgreSQL twin of the Redis counters' `consume.lua`, and like it a mirror of
 * `src/common/rate-limits/algorithms.ts` (the tests hold all three to the same outcomes).
 *
 *   <prefix>rl_consume(now_ms bigint, keys text[], rules bigint[], peek boolean) → text
 *
 * `rules` holds four integers per key: algorithm (1 fixed_window, 2 sliding_window,
 * 3 moving_window, 4 token_bucket), count, period (ms), burst. The limits are evaluated in
 * order: each allowed one is counted; the first that blocks is left untouched and ends the
 * evaluation (unless `peek`: then nothing is written and every limit answers on its own).
 * Returns comma-separated integers, two per evaluated limit: remaining (≥ 0) when allowed or
 * minus the retry delay (< 0) when blocked, then the reset time (epoch ms).
 *
 * Why a transaction-scoped advisory lock per counter: the first request of a counter finds no
 * row to lock, and two such requests would each insert a count of one; the lock (in memory,
 * released at commit) makes them wait for each other instead.
 */

/** The `CREATE FUNCTION` statement for the tables of `prefix`. */
export function RL_CONSUME_FUNCTION(prefix: string): string {
  const table = `${prefix}rl_counters`
  return `CREATE FUNCTION ${prefix}rl_consume(now_ms bigint, keys text[], rules bigint[], peek boolean)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  out text[] := '{}';
  i int;
  k text;
  alg int; cnt bigint; period bigint; burst bigint; effective bigint;
  row_alg int; row_start bigint; row_count bigint; row_previous bigint; row_tokens float8;
  row_stamps bigint[]; found_row boolean;
  start bigint; reset_at bigint; retry bigint; elapsed bigint; weighted bigint;
  cur bigint; prev bigint; since bigint; live bigint[]; len int; rate float8; tok float8;
  allowed boolean;
BEGIN
  FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
    k := keys[i];
    alg := rules[4 * i - 3]; cnt := rules[4 * i - 2]; period := rules[4 * i - 1]; burst := rules[4 * i];
    IF alg NOT BETWEEN 1 AND 4 OR cnt < 1 OR period < 1 OR period > 31536000000 OR burst < 0 THEN
      RAISE EXCEPTION 'switchyard: invalid rate-limit rule (period must be 1 ms to one year)';
    END IF;
    effective := cnt + burst;
    IF NOT peek THEN
      PERFORM pg_advisory_xact_lock(hashtextextended(k, 0));
    END IF;
    SELECT algorithm, start_ms, count, previous, tokens, stamps
      INTO row_alg, row_start, row_count, row_previous, row_tokens, row_stamps
      FROM ${table} WHERE key = k AND expires_ms > now_ms;
    found_row := FOUND AND row_alg = alg;
    IF alg = 1 THEN
      start := now_ms - now_ms % period;
      reset_at := start + period;
      cur := CASE WHEN found_row AND row_start = start THEN row_count ELSE 0 END;
      allowed := cur < effective;
      IF allowed THEN
        out := out || ARRAY[(effective - cur - 1)::text, reset_at::text];
        IF NOT peek THEN
          INSERT INTO ${table} (key, algorithm, start_ms, count, expires_ms)
            VALUES (k, alg, start, cur + 1, reset_at)
            ON CONFLICT (key) DO UPDATE SET algorithm = excluded.algorithm,
              start_ms = excluded.start_ms, count = excluded.count, expires_ms = excluded.expires_ms;
        END IF;
      ELSE
        out := out || ARRAY[(-(reset_at - now_ms))::text, reset_at::text];
      END IF;
    ELSIF alg = 2 THEN
      start := now_ms - now_ms % period;
      cur := 0; prev := 0;
      IF found_row THEN
        IF row_start = start THEN cur := row_count; prev := row_previous;
        ELSIF row_start = start - period THEN prev := row_count;
        END IF;
      END IF;
      elapsed := now_ms - start;
      weighted := (prev * (period - elapsed)) / period + cur;
      reset_at := start + period;
      allowed := weighted < effective;
      IF allowed THEN
        out := out || ARRAY[(effective - weighted - 1)::text, reset_at::text];
        IF NOT peek THEN
          INSERT INTO ${table} (key, algorithm, start_ms, count, previous, expires_ms)
            VALUES (k, alg, start, cur + 1, prev, start + 2 * period)
            ON CONFLICT (key) DO UPDATE SET algorithm = excluded.algorithm,
              start_ms = excluded.start_ms, count = excluded.count,
              previous = excluded.previous, expires_ms = excluded.expires_ms;
        END IF;
      ELSE
        IF cur >= effective THEN
          retry := reset_at - now_ms + 1;
        ELSE
          retry := greatest(1, floor((period - elapsed)::float8
            - ((effective - cur) * period)::float8 / greatest(prev, 1)::float8)::bigint + 1);
        END IF;
        out := out || ARRAY[(-retry)::text, (now_ms + retry)::text];
      END IF;
    ELSIF alg = 3 THEN
      since := now_ms - period;
      live := CASE WHEN found_row THEN
        ARRAY(SELECT s FROM unnest(row_stamps) WITH ORDINALITY AS t(s, n) WHERE s > since ORDER BY n)
        ELSE '{}'::bigint[] END;
      len := coalesce(array_length(live, 1), 0);
      allowed := len < effective;
      IF allowed THEN
        live := live || now_ms;
        out := out || ARRAY[(effective - len - 1)::text, (live[1] + period)::text];
        IF NOT peek THEN
          INSERT INTO ${table} (key, algorithm, stamps, expires_ms)
            VALUES (k, alg, live, now_ms + period)
            ON CONFLICT (key) DO UPDATE SET algorithm = excluded.algorithm,
              stamps = excluded.stamps, expires_ms = excluded.expires_ms;
        END IF;
      ELSE
        reset_at := live[len - effective + 1] + period;
        out := out || ARRAY[(-greatest(1, reset_at - now_ms))::text, reset_at::text];
      END IF;
    ELSE
      rate := cnt::float8 / period::float8;
      tok := CASE WHEN found_row
        THEN least(effective::float8, row_tokens + greatest(0, now_ms - row_start)::float8 * rate)
        ELSE effective::float8 END;
      allowed := tok >= 1;
      IF allowed THEN
        tok := tok - 1;
        reset_at := now_ms + ceil((effective::float8 - tok) / rate)::bigint;
        out := out || ARRAY[floor(tok)::bigint::text, reset_at::text];
        IF NOT peek THEN
          INSERT INTO ${table} (key, algorithm, start_ms, tokens, expires_ms)
            VALUES (k, alg, now_ms, tok, reset_at)
            ON CONFLICT (key) DO UPDATE SET algorithm = excluded.algorithm,
              start_ms = excluded.start_ms, tokens = excluded.tokens, expires_ms = excluded.expires_ms;
        END IF;
      ELSE
        retry := greatest(1, ceil((1 - tok) / rate)::bigint);
        out := out || ARRAY[(-retry)::text, (now_ms + retry)::text];
      END IF;
    END IF;
    EXIT WHEN NOT allowed AND NOT peek;
  END LOOP;
  RETURN array_to_string(out, ',');
END
$fn$`
}
