/**
 * Errors of `ctl` and their exit codes: 2 for bad usage (caught before any request), 1 for
 * everything else. Messages are printed as `error: <message>` on stderr.
 */

/** A command line that cannot be run as given (bad duration, bad datetime, bad URL). Exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2
}

/** An error answer of the admin API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message)
  }
}

/** The server could not be reached at all. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(
      `cannot reach the switchyard server at ${url} (${cause instanceof Error ? describeCause(cause) : String(cause)}). Check the URL with \`ctl config show\`.`,
    )
  }
}

function describeCause(error: Error): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? error.message
}
