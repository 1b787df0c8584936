/**
 * The throughput chart: finished tasks per time bucket over the selected window, successes and
 * failures stacked, as a server-rendered inline SVG (no script, no dependency). Each bar has a
 * tooltip with its exact counts; the axes say what they count and when.
 */
import { Time } from '../../../ui/index.js'
import type { MetricsMinute } from '../../metrics-report.js'

/** One bar of the chart. */
export interface ChartBucket {
  /** Start of the bucket (epoch ms). */
  start: number
  success: number
  failed: number
}

const MINUTE = 60_000
/** Bucket sizes, smallest first; the first that keeps the bar count at most `MAX_BARS` wins. */
const BUCKET_MINUTES = [1, 5, 10, 15, 30, 60, 120, 240, 720, 1440] as const
const MAX_BARS = 96

/** The width (ms) of the chart's buckets from `from` to `to`: at most {@link MAX_BARS} bars. */
export function bucketWidth(from: number, to: number): number {
  const span = Math.max(MINUTE, to - from)
  return (BUCKET_MINUTES.find((size) => span / (size * MINUTE) <= MAX_BARS) ?? 1440) * MINUTE
}

/**
 * Groups the series (per minute, or already per bucket of {@link bucketWidth}) into at most
 * {@link MAX_BARS} buckets from `from` to `to`.
 */
export function bucketSeries(
  series: readonly MetricsMinute[],
  from: number,
  to: number,
): ChartBucket[] {
  const size = bucketWidth(from, to)
  const first = Math.floor(from / size) * size
  const count = Math.max(1, Math.ceil((to - first) / size))
  const buckets: ChartBucket[] = Array.from({ length: count }, (_, index) => ({
    start: first + index * size,
    success: 0,
    failed: 0,
  }))
  for (const minute of series) {
    const index = Math.floor((Date.parse(minute.minute) - first) / size)
    const bucket = buckets[index]
    if (bucket === undefined) continue
    bucket.success += minute.success
    bucket.failed += minute.failed
  }
  return buckets
}

const WIDTH = 600
const HEIGHT = 120

/** The stacked bar chart of `buckets`. */
export function ThroughputChart(props: { buckets: readonly ChartBucket[] }): JSX.Element {
  const { buckets } = props
  const peak = Math.max(1, ...buckets.map((bucket) => bucket.success + bucket.failed))
  const slot = WIDTH / Math.max(1, buckets.length)
  const bar = Math.max(1, slot * 0.8)
  const y = (value: number) => (value / peak) * (HEIGHT - 4)
  const total = buckets.reduce((sum, bucket) => sum + bucket.success + bucket.failed, 0)
  const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0)
  const first = buckets[0]
  const last = buckets.at(-1)
  return (
    <figure class="chart">
      <figcaption>
        Finished tasks per interval: <span class="legend legend-ok">succeeded</span>{' '}
        <span class="legend legend-bad">failed</span> · peak {peak}
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`${total} tasks finished in this range, ${failed} failed`}
      >
        <line
          class="chart-axis"
          x1="0"
          y1={String(HEIGHT)}
          x2={String(WIDTH)}
          y2={String(HEIGHT)}
        />
        {buckets.map((bucket, index) => {
          const x = (index * slot + (slot - bar) / 2).toFixed(1)
          const ok = y(bucket.success)
          const bad = y(bucket.failed)
          if (bucket.success + bucket.failed === 0) return ''
          const label = `${new Date(bucket.start).toISOString().slice(0, 16).replace('T', ' ')} UTC: ${bucket.success} succeeded, ${bucket.failed} failed`
          return (
            <g>
              <title safe>{label}</title>
              <rect class="chart-hit" x={x} y="0" width={bar.toFixed(1)} height={String(HEIGHT)} />
              {ok > 0 ? (
                <rect
                  class="chart-ok"
                  x={x}
                  y={(HEIGHT - ok).toFixed(1)}
                  width={bar.toFixed(1)}
                  height={ok.toFixed(1)}
                />
              ) : (
                ''
              )}
              {bad > 0 ? (
                <rect
                  class="chart-bad"
                  x={x}
                  y={(HEIGHT - ok - bad).toFixed(1)}
                  width={bar.toFixed(1)}
                  height={bad.toFixed(1)}
                />
              ) : (
                ''
              )}
            </g>
          )
        })}
      </svg>
      <div class="chart-x">
        {first === undefined ? '' : <Time at={first.start} />}
        {last === undefined ? '' : <span>now</span>}
      </div>
    </figure>
  )
}
