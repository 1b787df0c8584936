#!/usr/bin/env node
/**
 * The `switchyard` command. `switchyard demo` runs the demo app (see README); `switchyard serve`
 * runs the central server of multi-service mode (docs/multi-service.md).
 */
import { Command } from 'commander'
import { buildDemoApp, demoInstructions } from '../demo/app.js'
import { parsePort, serve } from './serve.js'
import { packageVersion } from './version.js'

const program = new Command('switchyard')
  .description('switchyard runtime control plane')
  .version(packageVersion(), '-V, --version', 'print the version of switchyard')

program
  .command('demo')
  .description('run the demo app with every feature on the embedded defaults')
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--port <port>', 'port to listen on', process.env.PORT ?? '8000')
  .action(async (options: { host: string; port: string }) => {
    const app = await buildDemoApp()
    const address = await app.listen({ host: options.host, port: Number(options.port) })
    console.log(demoInstructions(address))
  })

program
  .command('serve')
  .description(
    'run the central server of multi-service mode (backend from CTL_BACKEND, credentials from CTL_ADMIN_USER / CTL_ADMIN_PASSWORD)',
  )
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--port <port>', 'port to listen on (0: any free port)', process.env.PORT ?? '9000')
  .option('--path <path>', 'mount path of the admin app', '/switchyard')
  .action(async (options: { host: string; port: string; path: string }) => {
    try {
      await serve({ host: options.host, port: parsePort(options.port), path: options.path })
    } catch (error) {
      console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
      process.exit(1)
    }
  })

await program.parseAsync()
