import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createEngine, type Engine } from '../../src/create-engine.js'
import { redactWebhookUrl, WebhookDispatcher } from '../../src/core/webhooks.js'
import { memoryStore } from '../../src/stores/memory.js'
import { FakeClock } from '../helpers/clock.js'

const secretPath = '/services/T000SECRET/B000SECRET/XXXXsecretTOKENxxxx'

const servers: Server[] = []
const engines: Engine[] = []
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  for (const server of servers.splice(0)) server.closeAllConnections()
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
})

/** A receiver that always fails with `status`. */
async function failing(status: number): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.statusCode = status
      res.end()
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://user:pass@127.0.0.1:${(server.address() as AddressInfo).port}${secretPath}?token=q`
}

/** A logger that records every line it is given, its fields (an error's stack included) too. */
function recordingLogger() {
  const lines: string[] = []
  const record = (fields: object | string, message?: string) =>
    lines.push(
      typeof fields === 'string'
        ? fields
        : `${message ?? ''} ${JSON.stringify(fields, (_key, value: unknown) =>
            value instanceof Error ? `${value.stack ?? ''} ${value.message}` : value,
          )}`,
    )
  return { lines, logger: { warn: record, error: record, info: record, debug: record } }
}

async function engineLogging(logger: ReturnType<typeof recordingLogger>['logger']) {
  const engine = createEngine({ store: memoryStore(), clock: new FakeClock(), logger })
  engines.push(engine)
  engine.registerRoute('GET', '/payments')
  await engine.start()
  return engine
}

function expectRedacted(lines: string[], origin: string) {
  expect(lines.length).toBeGreaterThan(0)
  for (const line of lines) {
    expect(line).not.toContain('SECRET')
    expect(line).not.toContain('secretTOKEN')
    expect(line).not.toContain('token=q')
    expect(line).not.toContain('pass@')
    expect(line).toContain(`${origin}/…`)
  }
}

describe('webhook URLs never reach the logs', () => {
  it('redacts to scheme and host', () => {
    expect(redactWebhookUrl(`https://hooks.slack.com${secretPath}`)).toBe(
      'https://hooks.slack.com/…',
    )
    expect(redactWebhookUrl('https://u:p@example.com:8443/x?y=1#z')).toBe(
      'https://example.com:8443/…',
    )
  })

  it('on retries and the final failure of a failing receiver', async () => {
    const url = await failing(500)
    const { lines, logger } = recordingLogger()
    const engine = await engineLogging(logger)
    engine.addWebhook(url, { retries: 2, retryDelay: 0.001 })
    await engine.disable('GET:/payments')
    await engine.webhooksIdle()
    expect(lines.filter((l) => l.includes('not delivered'))).toHaveLength(1)
    expect(lines.filter((l) => l.includes('retrying'))).toHaveLength(2)
    expectRedacted(lines, `http://${new URL(url).host}`)
  })

  it('when the receiver is unreachable and when the formatter throws', async () => {
    const url = await failing(500)
    const closed = servers.pop()!
    closed.closeAllConnections()
    await new Promise((resolve) => closed.close(resolve)) // nothing listens there any more
    const { lines, logger } = recordingLogger()
    const dispatcher = new WebhookDispatcher(logger)
    dispatcher.add(url, { retries: 0 })
    dispatcher.add(url, {
      formatter: () => {
        throw new Error(`cannot format for ${url}`.replace(url, 'it'))
      },
    })
    const engine = await engineLogging(recordingLogger().logger)
    const [state] = await engine.disable('GET:/payments')
    expect(state!.status).toBe('disabled')
    const entry = (await engine.getAuditLog()).items[0]!
    dispatcher.dispatch(entry)
    await dispatcher.idle()
    expect(lines.some((l) => l.includes('formatter failed'))).toBe(true)
    expect(lines.some((l) => l.includes('not delivered'))).toBe(true)
    expectRedacted(lines, `http://${new URL(url).host}`)
    dispatcher.close()
  })

  it('a refused URL is not echoed in the error', () => {
    const dispatcher = new WebhookDispatcher(recordingLogger().logger)
    for (const url of [`ftp://hooks.slack.com${secretPath}`, `hooks.slack.com${secretPath}`]) {
      let message = ''
      try {
        dispatcher.add(url)
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).toMatch(/Invalid webhook URL/)
      expect(message).not.toContain('SECRET')
    }
  })
})
