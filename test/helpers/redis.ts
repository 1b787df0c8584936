/**
 * Redis for tests: the real server at `SY_TEST_REDIS_URL` (default redis://127.0.0.1:6379), the
 * one variable every test file reads (the task store tests too).
 * Tests skip only when `CI` is unset and Redis is unreachable, with a loud warning; in CI an
 * unreachable Redis fails them. Every test file uses its own key prefix.
 */
import { randomUUID } from 'node:crypto'
import { deleteRedisKeys, serverReachable } from '../../support/servers.js'
import { serverEnabled } from './servers.js'

/** The Redis the tests use. */
export const TEST_REDIS_URL = process.env.SY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** True when a TCP connection to the test Redis succeeds within a second. */
export function redisReachable(url = TEST_REDIS_URL): Promise<boolean> {
  return serverReachable(url)
}

/** Whether Redis tests run; prints the warning when they are skipped. */
export function redisTestsEnabled(file: string): Promise<boolean> {
  return serverEnabled(TEST_REDIS_URL, file)
}

/** A unique key prefix for one test file or case. */
export function testPrefix(name: string): string {
  return `sy-test:${name}:${randomUUID().slice(0, 8)}:`
}

/** Deletes every key under `prefix`. */
export function deleteKeys(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  return deleteRedisKeys(url, prefix)
}
