/**
 * Child processes of the drills (`drill/children/*`), talking to the drill over IPC. The drills
 * run compiled (`npm run drill`) and from the TypeScript sources (the test suite's short
 * forms): a child is started the same way its parent module was loaded, with `tsx` for a
 * `.ts` parent.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { DrillScale } from './drill.js'

/** A message a child sends: `{ type, ...fields }`. */
export interface ChildMessage {
  type: string
  [field: string]: unknown
}

/** A running child with its messages. */
export interface DrillChild {
  process: ChildProcess
  /** Every message received so far (bounded by what the drills send). */
  messages: ChildMessage[]
  /** Standard error so far (the last 20 kB). */
  stderr(): string
  /** Resolves the first message of `type` (waiting at most `timeoutMs`). */
  waitFor(type: string, timeoutMs?: number): Promise<ChildMessage>
  /** Sends `message` and resolves the next message of type `reply` that arrives after it. */
  ask(message: ChildMessage, reply: string, timeoutMs?: number): Promise<ChildMessage>
  /** Sends a message if the child is still connected. */
  send(message: ChildMessage): void
  /** SIGKILLs the child and waits for its exit. */
  kill(): Promise<void>
  /** Resolves when the child exited. */
  exited: Promise<number | null>
}

/** Starts `drill/children/<name>` with `env` added to this process's environment. */
export function startChild(name: string, env: Record<string, string>): DrillChild {
  const typescript = import.meta.url.endsWith('.ts')
  const path = fileURLToPath(
    new URL(`../children/${name}${typescript ? '.ts' : '.js'}`, import.meta.url),
  )
  const child = fork(path, [], {
    env: { ...process.env, ...env },
    execArgv: typescript ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  })
  const messages: ChildMessage[] = []
  const waiters: { type: string; resolve: (message: ChildMessage) => void }[] = []
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000)
  })
  child.on('message', (message: ChildMessage) => {
    messages.push(message)
    for (const waiter of waiters.filter((each) => each.type === message.type)) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(message)
    }
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  )
  return {
    process: child,
    messages,
    stderr: () => stderr,
    exited,
    waitFor(type, timeoutMs = 30_000) {
      const seen = messages.find((message) => message.type === type)
      if (seen !== undefined) return Promise.resolve(seen)
      return next(type, timeoutMs)
    },
    ask(message, reply, timeoutMs = 30_000) {
      const answer = next(reply, timeoutMs)
      if (child.connected) child.send(message)
      return answer
    },
    send(message) {
      if (child.connected) child.send(message)
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }

  function next(type: string, timeoutMs: number): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`child ${name}: no "${type}" within ${timeoutMs} ms: ${stderr}`)),
        timeoutMs,
      )
      void exited.then((code) =>
        reject(new Error(`child ${name} exited (${String(code)}) before "${type}": ${stderr}`)),
      )
      waiters.push({
        type,
        resolve: (message) => {
          clearTimeout(timer)
          resolve(message)
        },
      })
    })
  }
}

/** In a child: sends a message to the drill (dropped when the channel is gone). */
export function tellParent(message: ChildMessage): void {
  if (process.send !== undefined && process.connected) process.send(message)
}

/**
 * Waits for the loader's first acknowledgement, then SIGKILLs it at a random moment under load:
 * between 0.5 and 2 s after that ack (short drills: 0.3 to 0.8 s). Resolves with the delay.
 */
export async function killUnderLoad(loader: DrillChild, scale: DrillScale): Promise<number> {
  await loader.waitFor('ack')
  const killedAfterMs = Math.round(
    scale === 'full' ? 500 + Math.random() * 1500 : 300 + Math.random() * 500,
  )
  await new Promise((resolve) => setTimeout(resolve, killedAfterMs))
  await loader.kill()
  return killedAfterMs
}
