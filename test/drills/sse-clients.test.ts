/**
 * Drill 6 in short form: 20 clients on each admin event stream (2 of each stalled: their socket
 * is paused) while route states flip and tasks run. Checked: the server drops every stalled
 * client, no other client is dropped, and every other client receives every event in order.
 */
import { describe, expect, it } from 'vitest'
import { sseClients } from '../../drill/drills/sse-clients.js'

describe('many live stream clients, some stalled (short form)', () => {
  it('drops the stalled clients and delivers every event in order to the others', async () => {
    const figures = await sseClients('short')
    const value = (prefix: string) =>
      figures.find((figure) => figure.name.startsWith(prefix))?.value
    expect(value('stalled clients dropped')).toBe(4)
    expect(value('ms until every stalled client')).not.toBe('never')
    expect(value('healthy clients dropped')).toBe(0)
    expect(value('events missing')).toBe(0)
    expect(value('events out of order')).toBe(0)
    expect(Number(value('events received'))).toBeGreaterThan(1000)
  }, 120_000)
})
