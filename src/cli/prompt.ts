/**
 * Reads a password without echo. On a terminal the input is read in raw mode, so nothing is
 * shown; when stdin is a pipe (scripts: `echo "$PW" | ctl login admin`) its first line is used.
 */
import { UsageError } from './errors.js'

/** Prompts on stderr and resolves the password typed (or piped) on stdin. */
export async function readPassword(prompt: string): Promise<string> {
  const input = process.stdin
  if (!input.isTTY) return readPipedLine()
  process.stderr.write(prompt)
  input.setRawMode(true)
  input.resume()
  input.setEncoding('utf8')
  try {
    return await new Promise<string>((resolve, reject) => {
      let password = ''
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            input.off('data', onData)
            resolve(password)
            return
          }
          if (char === '\u0003') {
            input.off('data', onData)
            reject(new UsageError('login cancelled.'))
            return
          }
          if (char === '\u007f' || char === '\b') password = password.slice(0, -1)
          else password += char
        }
      }
      input.on('data', onData)
    })
  } finally {
    input.setRawMode(false)
    input.pause()
    process.stderr.write('\n')
  }
}

async function readPipedLine(): Promise<string> {
  let text = ''
  for await (const chunk of process.stdin) {
    text += String(chunk)
    if (text.includes('\n')) break
  }
  const line = text.split(/\r?\n/)[0] ?? ''
  if (line === '') throw new UsageError('No password given: use --password or type it when asked.')
  return line
}
