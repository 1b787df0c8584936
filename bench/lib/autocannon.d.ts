/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    duration?: number
    pipelining?: number
    amount?: number
    method?: string
    headers?: Record<string, string>
    body?: string
  }
  interface Result {
    requests: { average: number; total: number; p50: number }
    latency: { p50: number; p99: number; average: number }
    errors: number
    non2xx: number
    timeouts: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
