#!/usr/bin/env node
/**
 * `ctl`, the command-line client of the switchyard admin API. See docs/cli.md.
 */
import { processEnvironment } from './config.js'
import { processOutput } from './output.js'
import { runCtl } from './program.js'

process.exitCode = await runCtl(process.argv.slice(2), {
  environment: processEnvironment(),
  output: processOutput(),
  now: () => Date.now(),
})
