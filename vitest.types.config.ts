import { defineConfig } from 'vitest/config'

/** `npm run check:types`: the type tests under test/types alone, type-checked, never run. */
export default defineConfig({
  test: {
    include: [],
    typecheck: { enabled: true, only: true, include: ['test/types/**/*.test-d.ts'] },
  },
})
