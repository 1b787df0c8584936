import { memoryStore } from '../../src/stores/memory.js'
import { runStoreConformance } from './conformance.js'

runStoreConformance('memory', { create: ({ now }) => memoryStore({ now }) })
