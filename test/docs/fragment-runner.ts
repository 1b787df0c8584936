/**
 * Runs a batch of fragment programs (./blocks.ts, `fragmentProgram`) in one process, one after
 * the other, each in its own working directory: a process start costs more than most
 * fragments, so the docs test runs its fragments in a few batches instead of one process each.
 *
 * Usage: `tsx fragment-runner.ts <dir>` where `<dir>` holds `fragment-NNN.ts` files; each gets
 * the working directory `<dir>/cwd-NNN`. For each it prints a line `\u001eSTART NNN` before and
 * `\u001eEND NNN <json>` after (`{"ok": true}` or `{"ok": false, "error": "…"}`), so its output
 * and its outcome can be told apart from the others'. A rejection nobody handles while a
 * fragment runs is that fragment's failure. The process exits once every fragment ran: a
 * server a fragment started is not waited for.
 */
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { pathToFileURL } from 'node:url'

const dir = process.argv[2] ?? ''
const names = readdirSync(dir)
  .filter((name) => /^fragment-\d+\.ts$/.test(name))
  .sort()

let late: unknown[] = []
process.on('unhandledRejection', (reason) => late.push(reason))
process.on('uncaughtException', (error) => late.push(error))

for (const name of names) {
  const id = name.slice('fragment-'.length, -'.ts'.length)
  const cwd = join(dir, `cwd-${id}`)
  mkdirSync(cwd, { recursive: true })
  process.chdir(cwd)
  late = []
  process.stdout.write(`\u001eSTART ${id}\n`)
  let error: unknown
  try {
    await import(pathToFileURL(join(dir, name)).href)
    // Rejections of the fragment's own promises surface on the next turns of the event loop.
    await new Promise((resolve) => setImmediate(resolve))
  } catch (thrown) {
    error = thrown
  }
  error ??= late[0]
  const outcome =
    error === undefined ? { ok: true } : { ok: false, error: inspect(error, { depth: 3 }) }
  process.stdout.write(`\n\u001eEND ${id} ${JSON.stringify(outcome)}\n`)
}
process.exit(0)
