import { describe, expect, it } from 'vitest'
import { ControlRefresh } from '../../src/tasks/control-refresh.js'

/** A load whose runs finish when the test says so. */
function gatedLoad() {
  const gates: (() => void)[] = []
  let running = 0
  let most = 0
  let runs = 0
  const load = () => {
    runs++
    running++
    most = Math.max(most, running)
    return new Promise<void>((resolve) => {
      gates.push(() => {
        running--
        resolve()
      })
    })
  }
  return {
    load,
    release: () => gates.shift()?.(),
    stats: () => ({ runs, most, waiting: gates.length }),
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('ControlRefresh', () => {
  it('never runs two loads at once and serves the requests made meanwhile with one more', async () => {
    const gated = gatedLoad()
    const refresh = new ControlRefresh(gated.load)
    const first = refresh.request()
    const second = refresh.request()
    const third = refresh.request()
    expect(gated.stats()).toEqual({ runs: 1, most: 1, waiting: 1 })
    gated.release()
    await first
    await settle()
    expect(gated.stats()).toEqual({ runs: 2, most: 1, waiting: 1 })
    gated.release()
    await Promise.all([second, third])
    expect(gated.stats()).toEqual({ runs: 2, most: 1, waiting: 0 })
  })

  it('runs the follow-up read even when the read in progress fails', async () => {
    let calls = 0
    const refresh = new ControlRefresh(() =>
      ++calls === 1 ? Promise.reject(new Error('store down')) : Promise.resolve(),
    )
    const first = refresh.request()
    const second = refresh.request()
    await expect(first).rejects.toThrow('store down')
    await expect(second).resolves.toBeUndefined()
    expect(calls).toBe(2)
  })
})
