/**
 * A logger for tests: keeps every line (level, message, fields with the child bindings) so a
 * test can assert what a part logged, in the pino shape the package logs in.
 */
import type { Logger, LoggerLevel } from '../../src/common/logger.js'

/** One line a {@link recordingLogger} received. */
export interface LogLine {
  level: LoggerLevel
  msg: string | undefined
  /** The line's fields, the bindings of the child it was logged on included. */
  fields: Record<string, unknown>
}

/** A {@link Logger} that records; `messages(level)` lists what was logged at that level. */
export interface RecordingLogger extends Logger {
  readonly lines: LogLine[]
  messages(level?: LoggerLevel): string[]
}

/** A logger that keeps its lines (children share them). */
export function recordingLogger(
  bindings: Record<string, unknown> = {},
  lines: LogLine[] = [],
): RecordingLogger {
  const level =
    (name: LoggerLevel) =>
    (fields: object | string, message?: string): void => {
      const own = typeof fields === 'string' ? {} : (fields as Record<string, unknown>)
      const msg = typeof fields === 'string' ? fields : message
      lines.push({ level: name, msg, fields: { ...bindings, ...own } })
    }
  return {
    lines,
    messages: (name) =>
      lines
        .filter((line) => name === undefined || line.level === name)
        .map((line) => line.msg ?? ''),
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    child: (more) => recordingLogger({ ...bindings, ...more }, lines),
  }
}

/** A logger that drops warnings and prints errors (with their fields: the stack of `err`). */
export const quietLogger = {
  warn: () => undefined,
  error: (fields: object | string, message?: string) =>
    typeof fields === 'string' ? console.error(fields) : console.error(message, fields),
}

/** A log level that pushes each line's message onto `list` (for tests that assert messages). */
export function pushMessage(list: string[]) {
  return (fields: object | string, message?: string): void => {
    list.push(typeof fields === 'string' ? fields : (message ?? ''))
  }
}
