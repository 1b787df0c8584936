#!/usr/bin/env node
/**
 * The `switchyard` command. `switchyard demo` runs the demo app (see README). The central
 * server of multi-service mode (`switchyard serve`) is not part of this version yet.
 */
import { Command } from 'commander'
import { buildDemoApp, demoInstructions } from '../demo/app.js'

const program = new Command('switchyard').description('switchyard runtime control plane')

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

await program.parseAsync()
