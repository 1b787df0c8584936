import { describe, expect, it } from 'vitest'
import { CircuitBreaker } from '../../src/common/circuit-breaker.js'

function breaker() {
  let now = 0
  const events: string[] = []
  const circuit = new CircuitBreaker({
    threshold: 3,
    cooldownMs: 1000,
    now: () => now,
    onOpen: (error) => events.push(`open: ${error.message}`),
    onClose: () => events.push('closed'),
  })
  return { circuit, events, advance: (ms: number) => (now += ms) }
}

describe('circuit breaker', () => {
  it('opens after the threshold of consecutive failures, once', () => {
    const { circuit, events } = breaker()
    circuit.failure(new Error('a'))
    circuit.success() // a success in between starts the count over
    circuit.failure(new Error('b'))
    circuit.failure(new Error('c'))
    expect(circuit.open).toBe(false)
    expect(circuit.allow()).toBe(true)
    circuit.failure(new Error('d'))
    expect(circuit.open).toBe(true)
    expect(circuit.allow()).toBe(false)
    expect(events).toEqual(['open: d'])
  })

  it('lets one trial through per cool-down; its success closes the circuit', () => {
    const { circuit, events, advance } = breaker()
    for (const n of [1, 2, 3]) circuit.failure(new Error(String(n)))
    advance(999)
    expect(circuit.allow()).toBe(false)
    advance(1)
    expect(circuit.allow()).toBe(true) // the trial
    expect(circuit.allow()).toBe(false) // only one while it is in flight
    circuit.failure(new Error('still down'))
    expect(circuit.allow()).toBe(false) // another cool-down
    advance(1000)
    expect(circuit.allow()).toBe(true)
    circuit.success()
    expect(circuit.open).toBe(false)
    expect(circuit.allow()).toBe(true)
    expect(events).toEqual(['open: 3', 'closed'])
  })
})
