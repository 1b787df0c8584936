import type { Clock } from '../../src/index.js'

/** A clock the test moves by hand. */
export class FakeClock implements Clock {
  constructor(public time = Date.parse('2026-11-21T12:00:00Z')) {}
  now(): number {
    return this.time
  }
  advance(ms: number): void {
    this.time += ms
  }
  iso(offsetMs = 0): string {
    return new Date(this.time + offsetMs).toISOString()
  }
}
