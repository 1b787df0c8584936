import { defineConfig } from 'vitest/config'

/**
 * Test files that run one at a time, after the others: those that stop or fail over the shared
 * Redis Cluster and Sentinel setups (and those that use them), the drills and the tests that
 * time several processes against each other, and the browser tests (Chromium wants a core of
 * its own). They keep the machine as they had it when the suite ran one file at a time.
 */
const SEQUENTIAL = [
  'test/stores/redis-cluster-failover.test.ts',
  'test/stores/redis-failover.test.ts',
  'test/**/redis-topologies.test.ts',
  'test/**/*browser*.test.ts',
  'test/drills/**/*.test.ts',
  'test/**/multi-process*.test.ts',
  'test/tasks/debounce-processes.test.ts',
  'test/integration/exit-on-close.test.ts',
  'test/demo.test.ts',
]

/** Workers of the parallel part: every core (the default leaves one free, for the others). */
const PARALLEL_WORKERS = 2

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Integration tests share real Redis/PostgreSQL/MariaDB servers; each test file
    // namespaces its keys and tables, so files may still run in parallel.
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: SEQUENTIAL,
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'sequential',
          include: SEQUENTIAL,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
})
