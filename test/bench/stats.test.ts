import { describe, expect, it } from 'vitest'
import { median, percentile } from '../../bench/lib/stats.js'

describe('bench statistics', () => {
  it('median: the middle value, or the mean of the two middle ones, whatever the order', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
  })

  it('percentile: nearest rank, never past either end', () => {
    const values = Array.from({ length: 1000 }, (_, i) => 1000 - i) // 1000 … 1, unsorted
    expect(percentile(values, 0.99)).toBe(990)
    expect(percentile(values, 0.5)).toBe(500)
    expect(percentile(values, 1)).toBe(1000)
    expect(percentile(values, 0)).toBe(1)
    expect(percentile([7], 0.95)).toBe(7)
    expect(percentile([], 0.5)).toBeNaN()
  })

  it('leaves its input in place', () => {
    const values = [3, 1, 2]
    percentile(values, 0.5)
    median(values)
    expect(values).toEqual([3, 1, 2])
  })
})
