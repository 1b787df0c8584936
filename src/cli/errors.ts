/**
 * Errors of `ctl` and their exit codes: 2 for bad usage (caught before any request), 1 for
 * everything else (and 3 from `ctl diff --exit-code` when there are changes). Messages are printed as `error: <message>` on stderr.
 */

/** A command line that cannot be run as given (bad duration, bad datetime, bad URL). Exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2
}

/**
 * Not a failure: a command's answer given as its exit status alone (`ctl diff --exit-code`
 * exits 3 when there are changes). Nothing more is printed.
 */
export class ExitStatus extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${String(exitCode)}`)
  }
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

/**
 * The server answered with a redirect. `ctl` never follows one: the request carries a password
 * or a token, which must reach only the configured server. Exit 1.
 */
export class RedirectRefusedError extends Error {
  constructor(
    readonly url: string,
    readonly status: number,
    location: string | null,
  ) {
    super(
      `the server at ${url} answered ${status} redirecting to ${describeLocation(url, location)}; ctl does not follow redirects, so nothing was sent there. If that server is the right one, point ctl at it (CTL_SERVER_URL or \`ctl config set-url\`).`,
    )
  }
}

/** The origin of a redirect's target: enough to recognise it, nothing of its path. */
function describeLocation(base: string, location: string | null): string {
  if (location === null || location === '') return 'nowhere (no Location header)'
  try {
    return new URL(location, base).origin
  } catch {
    return 'an invalid Location'
  }
}

/** The server answered, but not with what the command needs. Exit 1. */
export class BadAnswerError extends Error {}

function describeCause(error: Error): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  return cause?.code ?? cause?.message ?? error.message
}
