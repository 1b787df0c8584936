/**
 * What a process of receivers in bench/sdk-propagation.ts notes, and how it reports it: for
 * every change the driver makes, the latest `process.hrtime.bigint()` among the process's
 * receivers, taken right after each one handled the change, and the process's CPU time at the
 * first counted change (`SDK_FIRST`, after the driver's warm-up) and the last (`SDK_CHANGES` -
 * 1), user and system apart. It prints them only when the driver asks (a `REPORT` line on
 * stdin), after the run: writing a line per change to the driver would cost more CPU than
 * handling the change, and that work would compete for a core with receivers still handling it.
 */

/** Notes each receiver's handling of change `seq`. */
export type Record = (seq: number) => void

/** Starts answering the driver's `REPORT`; returns the function each receiver calls. */
export function propagationRecorder(receivers: number): Record {
  const changes = Number(process.env.SDK_CHANGES ?? 1000)
  const first = Number(process.env.SDK_FIRST ?? 0)
  const seen = new Map<number, { count: number; latest: bigint }>()
  const done = new Map<number, bigint>()
  const cpu: number[] = []
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (text: string) => {
    if (!text.includes('REPORT')) return
    const lines = [...done].map(([seq, at]) => `S ${seq} ${at}`)
    lines.push(`CPU ${cpu.join(' ')}`, 'END')
    process.stdout.write(`${lines.join('\n')}\n`)
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
      done.set(seq, entry.latest)
      if (seq === first || seq === changes - 1) {
        const usage = process.cpuUsage()
        cpu.push(usage.user, usage.system)
      }
    })
  }
}
