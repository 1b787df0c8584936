/**
 * Where a benchmark process's code comes from. `npm run bench` compiles src/ and bench/ to
 * bench/.out first and runs plain JavaScript: a server started under `tsx` keeps tsx's module
 * loader hooks installed, which was measured to add ~40,000 instructions to every Fastify
 * request (60.7k → 100k per request for bare Fastify) — more than everything switchyard does.
 */
import { fileURLToPath } from 'node:url'

/** True when this module runs from the compiled copy (bench/.out). */
export const runningCompiled = fileURLToPath(import.meta.url).includes('/bench/.out/')

let warned = false

/**
 * Node arguments that run `source` (a repository-relative `.ts` path such as
 * `bench/rate-limit-servers/server.ts`): its compiled `.js` when available, else through tsx
 * with a warning that the numbers are skewed.
 */
export function nodeArgsFor(source: string): string[] {
  if (runningCompiled) return [`bench/.out/${source.replace(/\.ts$/, '.js')}`]
  if (!warned) {
    warned = true
    console.warn(
      'WARNING: running benchmark servers through tsx; its loader hooks slow every request. Use `npm run bench` for numbers worth reporting.',
    )
  }
  return ['--import', 'tsx', source]
}
