#!/usr/bin/env node
/**
 * The `switchyard` command. `switchyard demo` runs the demo app (see README); `switchyard serve`
 * runs the central server of multi-service mode (docs/multi-service.md).
 */
import { Command } from 'commander'
import { buildDemoApp, demoInstructions } from '../demo/app.js'
import { UsageError } from './errors.js'
import { parsePort, serve } from './serve.js'
import { packageVersion } from '../common/package-version.js'

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
  .option(
    '--allowed-host <host>',
    'host name the server answers for, other Host headers get 421 (repeatable; default CTL_ALLOWED_HOSTS, else loopback names without credentials and any with them)',
    (value: string, previous: string[]) => [...previous, value],
    [] as string[],
  )
  .option('--metrics', 'serve Prometheus metrics at <path>/metrics to viewers of the admin app')
  .option(
    '--insecure-no-auth',
    'allow listening on a non-loopback address without CTL_ADMIN_USER / CTL_ADMIN_PASSWORD (anyone who reaches it is an admin)',
  )
  .action(
    async (options: {
      host: string
      port: string
      path: string
      allowedHost: string[]
      insecureNoAuth?: boolean
      metrics?: boolean
    }) => {
      try {
        await serve({
          host: options.host,
          port: parsePort(options.port),
          path: options.path,
          allowedHosts: options.allowedHost,
          insecureNoAuth: options.insecureNoAuth === true,
          metrics: options.metrics === true,
        })
      } catch (error) {
        console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
        // A refused command line (open mode on a network) is bad usage, as in ctl.
        process.exit(error instanceof UsageError ? 2 : 1)
      }
    },
  )

await program.parseAsync()
