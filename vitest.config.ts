import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests share real Redis/PostgreSQL/MariaDB servers; each test file
    // namespaces its keys and tables, so files may still run in parallel.
    pool: 'forks',
    reporters: ['default'],
  },
})
