import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { UiAssets } from '../../src/ui/assets.js'

describe('dashboard assets', () => {
  it('are ready to serve at once and compressed in the background, never blocking the mount', async () => {
    const assets = new UiAssets()
    const all = assets.all()
    expect(all.map((asset) => asset.file)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^htmx\.[0-9a-f]{10}\.js$/)]),
    )
    // Nothing was compressed while constructing: the copies arrive from zlib's thread pool.
    for (const asset of all) {
      expect(asset.gzip).toBeNull()
      expect(asset.brotli).toBeNull()
      expect(asset.body.length).toBeGreaterThan(0)
    }
    await expect
      .poll(() => all.every((asset) => asset.gzip !== null && asset.brotli !== null), {
        timeout: 10_000,
      })
      .toBe(true)
    for (const asset of all) {
      expect(gunzipSync(asset.gzip!).equals(asset.body)).toBe(true)
      expect(brotliDecompressSync(asset.brotli!).equals(asset.body)).toBe(true)
      expect(asset.brotli!.length).toBeLessThanOrEqual(asset.body.length)
    }
  })
})
