/**
 * What a process of receivers in bench/sdk-propagation.ts notes, and how it reports it. The
 * driver makes its changes in rounds: `SDK_FIRST` changes to warm up (not noted), then rounds of
 * `SDK_ROUND` changes each. For every counted change the process notes the latest
 * `process.hrtime.bigint()` among its receivers, taken right after each one handled the change,
 * and its CPU time (user and system apart) when it handled the first and the last change of a
 * round. It prints them only when the driver asks (a `REPORT` line on stdin), after each round:
 * writing a line per change to the driver would cost more CPU than handling the change, and that
 * work would compete for a core with receivers still handling it. A report clears what it
 * printed, so each round's report holds that round only.
 */

/** Notes each receiver's handling of change `seq`. */
export type Record = (seq: number) => void

/** Starts answering the driver's `REPORT`; returns the function each receiver calls. */
export function propagationRecorder(receivers: number): Record {
  const first = Number(process.env.SDK_FIRST ?? 0)
  const round = Number(process.env.SDK_ROUND ?? 1000)
  const seen = new Map<number, { count: number; latest: bigint }>()
  let done: [number, bigint][] = []
  let cpu: number[] = []
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (text: string) => {
    if (!text.includes('REPORT')) return
    const lines = done.map(([seq, at]) => `S ${seq} ${at}`)
    lines.push(`CPU ${cpu.join(' ')}`, 'END')
    process.stdout.write(`${lines.join('\n')}\n`)
    done = []
    cpu = []
  })
  return (seq) => {
    // After the synchronous work that delivered the change has finished.
    queueMicrotask(() => {
      const now = process.hrtime.bigint()
      const entry = seen.get(seq) ?? { count: 0, latest: 0n }
      entry.count += 1
      if (now > entry.latest) entry.latest = now
      if (entry.count < receivers) {
        seen.set(seq, entry)
        return
      }
      seen.delete(seq)
      if (seq < first) return
      done.push([seq, entry.latest])
      const position = (seq - first) % round
      if (position === 0 || position === round - 1) {
        const usage = process.cpuUsage()
        cpu.push(usage.user, usage.system)
      }
    })
  }
}
