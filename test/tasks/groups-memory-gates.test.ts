/** The in-process task gates pass the same conformance as the stores' (one instance, two views). */
import { describe, it } from 'vitest'
import { memoryGates } from '../../src/tasks/groups/memory-gates.js'
import { gatesSuite } from './persistence/conformance/gates.js'

describe('memory task gates', () => {
  const gates = memoryGates()
  gatesSuite({ a: () => gates, b: () => gates, test: it })
})
