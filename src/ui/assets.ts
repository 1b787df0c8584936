/**
 * The dashboards' static files — htmx, its SSE extension, our own script, the stylesheet and the
 * icon — served from the package, never from a CDN.
 *
 * Why content hashes and precompression: each file's URL carries a hash of its bytes
 * (`/assets/htmx.4f1c2a9b.js`), so it can be cached for a year (`immutable`) and a new release
 * still reaches every browser at once. The files are read and hashed when the first dashboard
 * is mounted, and compressed (brotli and gzip, best ratio) once, in the background on zlib's
 * thread pool: mounting costs no compression time (brotli at its best ratio takes about half a
 * second for htmx), and until a compressed copy is ready a request gets the plain bytes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { brotliCompress, constants, gzip } from 'node:zlib'

/** The logical names of the shared assets. */
export type AssetName = 'htmx' | 'sse' | 'script' | 'style' | 'icon'

/** One asset, ready to send. */
export interface Asset {
  /** File name with its hash, e.g. `htmx.4f1c2a9b.js`. */
  readonly file: string
  readonly contentType: string
  readonly body: Buffer
  /** The gzip copy, null until the background compression has made it. */
  readonly gzip: Buffer | null
  /** The brotli copy, null until the background compression has made it. */
  readonly brotli: Buffer | null
}

const require = createRequire(import.meta.url)
const own = (name: string) => fileURLToPath(new URL(`./static/${name}`, import.meta.url))

/** Where each asset comes from: a file of a dependency or of this folder. */
const SOURCES: Record<AssetName, { path: () => string; stem: string; type: string }> = {
  htmx: {
    path: () => require.resolve('htmx.org/dist/htmx.min.js'),
    stem: 'htmx',
    type: 'text/javascript; charset=utf-8',
  },
  sse: {
    path: () => require.resolve('htmx-ext-sse/dist/sse.min.js'),
    stem: 'htmx-sse',
    type: 'text/javascript; charset=utf-8',
  },
  script: { path: () => own('ui.js'), stem: 'ui', type: 'text/javascript; charset=utf-8' },
  style: { path: () => own('ui.css'), stem: 'ui', type: 'text/css; charset=utf-8' },
  icon: { path: () => own('icon.svg'), stem: 'icon', type: 'image/svg+xml' },
}

interface LoadedAsset {
  file: string
  contentType: string
  body: Buffer
  gzip: Buffer | null
  brotli: Buffer | null
}

function load(name: AssetName): LoadedAsset {
  const source = SOURCES[name]
  const path = source.path()
  const body = readFileSync(path)
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10)
  const extension = path.slice(path.lastIndexOf('.'))
  const asset: LoadedAsset = {
    file: `${source.stem}.${hash}${extension}`,
    contentType: source.type,
    body,
    gzip: null,
    brotli: null,
  }
  // A failed compression only means the plain bytes keep being sent.
  gzip(body, { level: 9 }, (error, compressed) => {
    if (error === null) asset.gzip = compressed
  })
  brotliCompress(
    body,
    { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY } },
    (error, compressed) => {
      if (error === null) asset.brotli = compressed
    },
  )
  return asset
}

/** Every shared asset, by logical name and by hashed file name. */
export class UiAssets {
  private readonly byName: ReadonlyMap<AssetName, Asset>
  private readonly byFile: ReadonlyMap<string, Asset>

  constructor() {
    const names = Object.keys(SOURCES) as AssetName[]
    this.byName = new Map(names.map((name) => [name, load(name)]))
    this.byFile = new Map([...this.byName.values()].map((asset) => [asset.file, asset]))
  }

  /** The hashed file name of an asset (append it to the mount's `assets/` URL). */
  file(name: AssetName): string {
    const asset = this.byName.get(name)
    if (asset === undefined) throw new Error(`Unknown asset ${name}`)
    return asset.file
  }

  /** The asset behind a hashed file name, or undefined. */
  lookup(file: string): Asset | undefined {
    return this.byFile.get(file)
  }

  /** Every asset (for tests and the bench). */
  all(): Asset[] {
    return [...this.byName.values()]
  }
}

let shared: UiAssets | null = null

/** The process-wide assets (loaded once; both dashboards share them). */
export function uiAssets(): UiAssets {
  shared ??= new UiAssets()
  return shared
}
