#!/usr/bin/env node
/**
 * `ctl`, the command-line client of the admin API. The admin API it talks to is not part of
 * this version yet, so the command says so instead of pretending to work.
 */
process.stderr.write(
  'error: ctl needs the switchyard admin API, which this version does not include yet.\n',
)
process.exitCode = 1
