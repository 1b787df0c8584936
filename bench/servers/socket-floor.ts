/**
 * The floor of bench/sdk-propagation.ts: `SDK_APPS` plain TCP connections (default 10) to the
 * bench's socket server at `FLOOR_PORT`, with no HTTP, no event-stream parsing, no JSON and no
 * state to update. Each frame is a line that starts with its change number; a connection notes
 * the change as soon as its line has arrived. What remains is what any receiver in Node pays
 * for a change on a socket (the wake-up, the read, a `data` event), so the latency measured
 * through these connections is one that no SDK, however lean, can go below on this machine.
 */
import { connect, type Socket } from 'node:net'
import { propagationRecorder } from './propagation-recorder.js'

const count = Number(process.env.SDK_APPS ?? 10)
const port = Number(process.env.FLOOR_PORT)
const record = propagationRecorder(count)

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(socket))
    socket.once('error', reject)
    let carried = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      const text = carried + chunk
      let start = 0
      let end = text.indexOf('\n')
      while (end >= 0) {
        record(Number.parseInt(text.slice(start, end), 10))
        start = end + 1
        end = text.indexOf('\n', start)
      }
      carried = text.slice(start)
    })
  })
}

for (let i = 0; i < count; i++) await open()
console.log('READY 0')

// The driver ends this process with SIGTERM: leaving through exit lets `--cpu-prof` (see
// SY_BENCH_CPU_PROF in sdk-propagation.ts) write its profile.
process.on('SIGTERM', () => process.exit(0))
