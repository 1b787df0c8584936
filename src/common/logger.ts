/**
 * The one logger shape of the package: pino's, which is also Fastify's `app.log`.
 *
 * Every part (engine, stores, rate-limit counters, SDK, task manager, admin apps) logs through a
 * {@link Logger}. Registered as Fastify plugins they log through a child of `app.log`; standalone
 * they take a `logger` option, and without one write warnings and errors as JSON lines to stderr
 * ({@link stderrLogger}). An error is always logged as `logger.error({ err }, 'message')`: pino
 * serialises `err` with its stack, where an error passed as a further argument loses it.
 */

/** One level of a {@link Logger}: `(fields, message)` or `(message)`, as pino takes them. */
export interface LogMethod {
  (fields: object, message?: string): void
  (message: string): void
}

/** A pino-compatible logger (pino, Fastify's `app.log`, or anything with the same methods). */
export interface Logger {
  debug: LogMethod
  info: LogMethod
  warn: LogMethod
  error: LogMethod
  /** A logger that adds `bindings` (e.g. `{ module: 'switchyard' }`) to every line. */
  child(bindings: Record<string, unknown>): Logger
}

/**
 * What a `logger` option takes: a {@link Logger}, or an object with at least `warn` and `error`
 * (the shape earlier versions asked for); missing levels are dropped and a missing `child` adds
 * its bindings to each line's fields.
 */
export type LoggerLike = Pick<Logger, 'warn' | 'error'> & Partial<Logger>

/** The levels of a {@link Logger}, lowest first. */
export const LOGGER_LEVELS = ['debug', 'info', 'warn', 'error'] as const

/** One of {@link LOGGER_LEVELS}. */
export type LoggerLevel = (typeof LOGGER_LEVELS)[number]

/** Calls `logger[level]` with the arguments a {@link LogMethod} was given. */
export function logAt(
  logger: Logger,
  level: LoggerLevel,
  fields: object | string,
  message?: string,
): void {
  if (typeof fields === 'string') logger[level](fields)
  else if (message === undefined) logger[level](fields)
  else logger[level](fields, message)
}

const ignore: LogMethod = () => undefined

/** A logger that drops every line. */
export const silentLogger: Logger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => silentLogger,
}

/**
 * A complete {@link Logger} from what a `logger` option was given: a full logger is returned
 * as it is; a partial one gets no-op levels and a `child` that merges its bindings into each
 * line's fields. Throws a `TypeError` for anything without `warn` and `error` methods.
 */
export function toLogger(given: LoggerLike): Logger {
  // Untyped (JavaScript) callers may pass anything.
  const candidate: unknown = given
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof (candidate as Partial<Logger>).warn !== 'function' ||
    typeof (candidate as Partial<Logger>).error !== 'function'
  ) {
    throw new TypeError(
      'logger must be a pino-compatible logger (pino, Fastify app.log): an object with at least warn and error methods.',
    )
  }
  if (
    typeof given.debug === 'function' &&
    typeof given.info === 'function' &&
    typeof given.child === 'function'
  ) {
    return given as Logger
  }
  return withBindings(given, {})
}

/** `given`'s levels (no-ops where missing), each line's fields preceded by `bindings`. */
function withBindings(given: LoggerLike, bindings: Record<string, unknown>): Logger {
  const bound = Object.keys(bindings).length > 0
  const level =
    (name: LoggerLevel): LogMethod =>
    (fields: object | string, message?: string) => {
      if (given[name] === undefined) return
      const target = given as Logger
      if (!bound) logAt(target, name, fields, message)
      else if (typeof fields === 'string') target[name]({ ...bindings }, fields)
      else logAt(target, name, { ...bindings, ...fields }, message)
    }
  return {
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    child: (more) => withBindings(given, { ...bindings, ...more }),
  }
}

/** pino's numbers for the levels, so that pino's tools read the default output. */
const LEVEL_NUMBERS: Readonly<Record<LoggerLevel, number>> = {
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
}

/** Options of {@link stderrLogger}. */
export interface StderrLoggerOptions {
  /** Fields of every line, e.g. `{ module: 'switchyard' }`. */
  bindings?: Record<string, unknown>
  /** Lowest level written; default `warn`. */
  level?: LoggerLevel
  /** Where lines go; default `process.stderr`. */
  write?: (line: string) => void
}

/**
 * The default logger when none is given: one JSON line per call on stderr, in pino's layout
 * (`level` as pino's number, `time`, the bindings, the fields, `msg`), warnings and errors only.
 * An `Error` in the fields is written with its type, message and stack.
 */
export function stderrLogger(options: StderrLoggerOptions = {}): Logger {
  const bindings = options.bindings ?? {}
  const lowest = LEVEL_NUMBERS[options.level ?? 'warn']
  const write = options.write ?? ((line: string) => process.stderr.write(line))
  const level =
    (name: LoggerLevel): LogMethod =>
    (fields: object | string, message?: string) => {
      const number = LEVEL_NUMBERS[name]
      if (number < lowest) return
      const own = typeof fields === 'string' ? {} : fields
      const msg = typeof fields === 'string' ? fields : message
      write(jsonLine({ level: number, time: Date.now(), ...bindings, ...own, msg }) + '\n')
    }
  return {
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    child: (more) => stderrLogger({ ...options, bindings: { ...bindings, ...more } }),
  }
}

/** `line` as JSON, errors serialised; a value JSON cannot hold never loses the line. */
function jsonLine(line: Record<string, unknown>): string {
  try {
    return JSON.stringify(line, (_key, value: unknown) =>
      value instanceof Error ? serializeError(value) : value,
    )
  } catch {
    return JSON.stringify({ level: line.level, time: line.time, msg: line.msg })
  }
}

/** An error as pino's `err` serialiser writes it: type, message, stack, and its cause. */
function serializeError(error: Error): Record<string, unknown> {
  return {
    type: error.name,
    message: error.message,
    stack: error.stack,
    ...(error.cause === undefined ? {} : { cause: error.cause }),
  }
}

/**
 * A logger that can be replaced after the parts that log through it were built: an engine or a
 * task manager created without a `logger` option starts on the default and switches to the
 * Fastify app's logger when a plugin attaches it. A logger given explicitly is never replaced.
 */
export class LoggerSlot implements Logger {
  #target: Logger
  #replaceable: boolean

  constructor(given: LoggerLike | undefined, fallback: () => Logger) {
    this.#target = given === undefined ? fallback() : toLogger(given)
    this.#replaceable = given === undefined
  }

  /** The logger lines go to now. */
  get target(): Logger {
    return this.#target
  }

  /**
   * Logs through `logger` from now on, unless a logger was given explicitly or attached
   * before (the first app wins). Returns whether it was taken.
   */
  attach(logger: LoggerLike): boolean {
    if (!this.#replaceable) return false
    this.#target = toLogger(logger)
    this.#replaceable = false
    return true
  }

  debug: LogMethod = (fields: object | string, message?: string) =>
    logAt(this.#target, 'debug', fields, message)
  info: LogMethod = (fields: object | string, message?: string) =>
    logAt(this.#target, 'info', fields, message)
  warn: LogMethod = (fields: object | string, message?: string) =>
    logAt(this.#target, 'warn', fields, message)
  error: LogMethod = (fields: object | string, message?: string) =>
    logAt(this.#target, 'error', fields, message)

  /** A child that follows the slot: taken again from the new logger after an attach. */
  child(bindings: Record<string, unknown>): Logger {
    return following(() => this.#target, bindings)
  }
}

/** A child of whatever `parentOf()` is at each call (made again when the parent changes). */
function following(parentOf: () => Logger, bindings: Record<string, unknown>): Logger {
  let parent: Logger | null = null
  let child: Logger = silentLogger
  const current = (): Logger => {
    const now = parentOf()
    if (now !== parent) {
      parent = now
      child = now.child(bindings)
    }
    return child
  }
  const level =
    (name: LoggerLevel): LogMethod =>
    (fields: object | string, message?: string) =>
      logAt(current(), name, fields, message)
  return {
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    child: (more) => following(current, more),
  }
}
