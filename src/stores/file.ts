/**
 * The file store: every record in one JSON document (`CTL_FILE_PATH`, default
 * `switchyard-state.json`), loaded at startup and rewritten after every change.
 *
 * Why the write is temp file + fsync + rename: a crash at any moment leaves either the old
 * document or the new one on disk, never half of one. Why writes are grouped: while one write
 * is in flight, further changes wait and then go to disk together in the next write, so a
 * burst of changes costs two writes, not one per change (each caller still resolves only once
 * its change is durable).
 *
 * A file that exists but cannot be read or parsed is a startup error naming the file; it is
 * never replaced, since that would throw away the state it holds. One process writes the file:
 * opening the same path twice in one process is refused, and several processes must not share
 * it (use Redis for that).
 */
import { open, readFile, rename, rm } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { LoggerLike } from '../common/logger.js'
import { ConfigError, toError } from '../core/errors.js'
import { fileEvaluationKeys } from './evaluation-keys.js'
import { fileApiTokens } from './api-tokens.js'
import { MemoryState, type StateDocument } from './memory-state.js'
import { storeLogger } from './store-logger.js'
import type { FileSections, Store } from './types.js'

/** Options of {@link fileStore}. */
export interface FileStoreOptions {
  /** Path of the JSON document; default `switchyard-state.json` in the working directory. */
  path?: string
  /** Current time for token and claim expiry; default `Date.now`. */
  now?: () => number
  /** Seconds between purges of expired tokens and claims, from the file too (default 300; 0 = never). */
  purgeInterval?: number
  /** Where background faults (a failed rewrite, a change listener's error) are logged; default the engine's logger. */
  logger?: LoggerLike
}

/** The default document path. */
export const DEFAULT_FILE_PATH = 'switchyard-state.json'

const openPaths = new Set<string>()

/** Creates a {@link Store} kept in one JSON file. */
export function fileStore(options: FileStoreOptions = {}): Store {
  const path = resolve(options.path ?? DEFAULT_FILE_PATH)
  let loaded = false
  const writer = new GroupWriter(path, () => state.toDocument())
  const logger = storeLogger(options.logger)
  const state: MemoryState = new MemoryState({
    logger,
    persist: () =>
      loaded ? writer.persist() : Promise.reject(new Error(`file store ${path} is not connected`)),
    ...(options.now === undefined ? {} : { now: options.now }),
  })

  const sections: FileSections = {
    read: (name) => state.readSection(name),
    write: (name, value) => state.writeSection(name, value),
  }

  const evaluationKeys = fileEvaluationKeys(sections)
  const apiTokens = fileApiTokens(sections)
  let stopPurging: () => void = () => undefined
  return {
    kind: 'file',
    routes: state.routes,
    maintenance: state.maintenance,
    audit: state.audit,
    tokens: state.tokens,
    evaluationKeys,
    apiTokens,
    claims: state.claims,
    changes: state.changes,
    backend: {
      kind: 'file',
      // Where the document lives: modules that keep files next to it (rate-limit counters) use it.
      path,
      sections,
    },
    async connect() {
      if (loaded) return
      if (openPaths.has(path)) {
        throw new ConfigError(
          `State file ${path} is already open in this process; one file store per file.`,
        )
      }
      state.load(await readDocument(path))
      evaluationKeys.reload()
      apiTokens.reload()
      openPaths.add(path)
      loaded = true
      stopPurging = state.purgeEvery(options.purgeInterval ?? 300, (error) => {
        logger.error({ err: error, path }, `could not rewrite ${path} after purging expired tokens`)
      })
    },
    async close() {
      if (!loaded) return
      stopPurging()
      await writer.idle()
      loaded = false
      openPaths.delete(path)
    },
    attachLogger: (engineLogger) => void logger.attach(engineLogger),
  }
}

/** An empty document (a store whose file does not exist yet). */
function emptyDocument(): StateDocument {
  return {
    format: 1,
    version: 0,
    routes: [],
    global: null,
    services: {},
    audit: [],
    tokens: {},
    claims: {},
    sections: {},
  }
}

/** Reads and checks the document; a missing file is an empty store, anything else unusable is fatal. */
async function readDocument(path: string): Promise<StateDocument> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyDocument()
    throw new ConfigError(
      `Cannot read the state file ${path} (CTL_FILE_PATH): ${toError(error).message}`,
      { path },
      { cause: error },
    )
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw corrupt(path, `not valid JSON (${toError(error).message})`, error)
  }
  const problem = documentProblem(parsed)
  if (problem !== null) throw corrupt(path, problem)
  return { ...emptyDocument(), ...(parsed as Partial<StateDocument>) }
}

function corrupt(path: string, problem: string, cause?: unknown): ConfigError {
  return new ConfigError(
    `The state file ${path} (CTL_FILE_PATH) is corrupt: ${problem}. It was left untouched; fix or move it away and restart.`,
    { path },
    cause === undefined ? undefined : { cause },
  )
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What is wrong with a parsed document, or null when it has the expected shape. */
function documentProblem(value: unknown): string | null {
  if (!isObject(value)) return 'expected a JSON object'
  if (value.format !== 1) return `unknown format ${JSON.stringify(value.format)} (expected 1)`
  if (typeof value.version !== 'number') return '"version" is not a number'
  for (const field of ['routes', 'audit'] as const) {
    if (!Array.isArray(value[field])) return `"${field}" is not a list`
  }
  for (const field of ['services', 'tokens', 'claims', 'sections'] as const) {
    if (value[field] !== undefined && !isObject(value[field])) return `"${field}" is not an object`
  }
  if (value.global !== null && value.global !== undefined && !isObject(value.global))
    return '"global" is not an object'
  const routes = value.routes as unknown[]
  if (routes.some((state) => !isObject(state) || typeof state.route !== 'string'))
    return '"routes" holds an entry that is not a route state'
  return null
}

/**
 * Writes the document atomically, grouping the changes made while a write is in flight into
 * the next write.
 */
class GroupWriter {
  private writing: Promise<void> | null = null
  private waiting: { promise: Promise<void>; settle: (error?: unknown) => void } | null = null

  constructor(
    private readonly path: string,
    private readonly content: () => StateDocument,
  ) {}

  /** Resolves once a write that includes every change made so far is durable. */
  persist(): Promise<void> {
    if (this.waiting === null) {
      let settle!: (error?: unknown) => void
      const promise = new Promise<void>((resolvePromise, reject) => {
        settle = (error) => (error === undefined ? resolvePromise() : reject(toError(error)))
      })
      this.waiting = { promise, settle }
    }
    const { promise } = this.waiting
    if (this.writing === null) this.startWrite()
    return promise
  }

  /** Resolves when no write is in flight or waiting. */
  async idle(): Promise<void> {
    while (this.writing !== null) await this.writing
  }

  private startWrite(): void {
    const batch = this.waiting
    if (batch === null) return
    this.waiting = null
    const text = JSON.stringify(this.content())
    this.writing = writeAtomically(this.path, text).then(
      () => batch.settle(),
      (error: unknown) => batch.settle(error ?? new Error('write failed')),
    )
    void this.writing.finally(() => {
      this.writing = null
      if (this.waiting !== null) this.startWrite()
    })
  }
}

/** Writes `text` to a temporary file, fsyncs it and renames it over `path`. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`
  const handle = await open(temp, 'w', 0o600)
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
}
