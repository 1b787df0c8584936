import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { buildDemoApp } from '../src/demo/app.js'

describe('the demo app', () => {
  it('serves every decorator as documented and its controls change states', async () => {
    const app = await buildDemoApp()
    expect((await app.inject('/payments')).statusCode).toBe(503)
    expect((await app.inject('/legacy')).json().error.code).toBe('ROUTE_DISABLED')
    expect((await app.inject('/v1/users')).headers.sunset).toBe('Sat, 01 Jan 2028 00:00:00 GMT')
    expect((await app.inject('/health')).statusCode).toBe(200)
    expect(
      (await app.inject({ method: 'POST', url: '/_demo/disable?route=GET:/orders' })).statusCode,
    ).toBe(200)
    expect((await app.inject('/orders')).statusCode).toBe(503)
    const bad = await app.inject({ method: 'POST', url: '/_demo/disable?route=orders' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.code).toBe('VALIDATION_ERROR')
    await app.close()
  })

  it('npm start listens on PORT and prints what to try', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/server.ts'], {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = ''
        const timer = setTimeout(() => reject(new Error(`demo did not start: ${text}`)), 15_000)
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString()
          if (text.includes('_demo/global-off')) {
            clearTimeout(timer)
            resolve(text)
          }
        })
        child.on('exit', (code) => reject(new Error(`demo exited with ${code}: ${text}`)))
      })
      expect(output).toMatch(/switchyard demo listening on http:\/\/127\.0\.0\.1:[1-9]\d*/)
      expect(output).toContain('curl -i')
    } finally {
      child.kill('SIGTERM')
    }
  })
})
