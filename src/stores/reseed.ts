/**
 * Re-seeding a Redis that came back empty (restarted without persistence, or flushed).
 *
 * Every record this instance knows — route states, maintenance, flags, segments, rate-limit
 * policies — is also kept here, as the stored JSON, in a {@link RecordShadow} per namespace,
 * together with the newest version this instance has seen there (its position in that
 * namespace's write order). The shadows change exactly when the replicas do: on a full read,
 * on this instance's own writes and on other instances' change messages.
 *
 * The store keeps a marker key. It is set on the first connection, so when it is missing
 * later, Redis lost its data. Before any full reload (the reloads after a reconnect are the
 * first reads that would see the empty Redis), {@link RedisReseeder.ensure} checks the marker;
 * when it is missing, or set by another instance's re-seed since this instance last looked, it
 * writes its shadows back with `reseed.lua`: a namespace is written only when this instance's
 * position is newer than the namespace's counter, so among several instances re-seeding at
 * once the newest wins, and writes made after a re-seed are never overwritten. The counters
 * are restored to the winning position, so versions keep growing and no replica drops a new
 * write as old. Counters and the blocked-request log are not re-seeded: they start empty.
 */
import { randomUUID } from 'node:crypto'

/** The records of one namespace as this instance knows them, and its position there. */
export class RecordShadow {
  /** Newest version seen in the namespace (a full read's counter, own writes, messages). */
  position = 0
  /** Container key → field → stored JSON (a string container uses the field `''`). */
  private readonly containers = new Map<string, Map<string, string>>()

  /**
   * `seqKey`: the namespace's version counter; `kinds`: every container key of the namespace
   * and whether it is a hash or a single string.
   */
  constructor(
    readonly seqKey: string,
    readonly kinds: ReadonlyMap<string, 'hash' | 'string'>,
  ) {
    for (const key of kinds.keys()) this.containers.set(key, new Map())
  }

  /** Records that the namespace has reached `version`. */
  observe(version: number): void {
    if (Number.isSafeInteger(version) && version > this.position) this.position = version
  }

  /** Replaces one container with what a full read returned (read with counter `version`). */
  replace(container: string, entries: Iterable<readonly [string, string]>, version: number): void {
    const records = this.containers.get(container)
    if (records === undefined) return
    records.clear()
    for (const [field, text] of entries) records.set(field, text)
    this.observe(version)
  }

  /** Applies one write (`text` null: deleted), numbered `version`. */
  set(container: string, field: string, text: string | null, version: number): void {
    const records = this.containers.get(container)
    if (records === undefined) return
    if (text === null) records.delete(field)
    else records.set(field, text)
    this.observe(version)
  }

  /** Number of records held. */
  get size(): number {
    let size = 0
    for (const records of this.containers.values()) size += records.size
    return size
  }

  /** The script's KEYS and ARGV for this namespace (see `lua/reseed.lua`). */
  encode(keys: string[], args: (string | number)[]): void {
    keys.push(this.seqKey)
    args.push(this.position, this.containers.size)
    for (const [key, records] of this.containers) {
      keys.push(key)
      args.push(this.kinds.get(key) ?? 'hash', records.size)
      for (const [field, text] of records) args.push(field, text)
    }
  }
}

/** What a {@link RedisReseeder} runs its script and writes its log line with. */
export interface ReseederDeps {
  /** The marker key. */
  markerKey: string
  /** GET of the marker. */
  readMarker(): Promise<string | null>
  /** Runs `reseed.lua`; resolves its reply. */
  run(keys: string[], args: (string | number)[]): Promise<unknown>
  /** The log line of a re-seed (and of a failed check). */
  log(message: string, error?: Error): void
}

/** Checks the marker key and re-seeds the namespaces registered with it. */
export class RedisReseeder {
  private readonly shadows: RecordShadow[] = []
  /** The marker value this instance last saw (null: never looked). */
  private epoch: string | null = null
  private checking: Promise<void> | null = null

  constructor(private readonly deps: ReseederDeps) {}

  /** Registers a namespace's shadow (the route store's and each record feed's). */
  register(shadow: RecordShadow): void {
    this.shadows.push(shadow)
  }

  /**
   * Checks the marker; re-seeds from the shadows when it is missing or changed since the last
   * check. Concurrent callers share one check. Rejects when Redis cannot be asked (the reload
   * that called it fails and is retried, as any reload would).
   */
  ensure(): Promise<void> {
    this.checking ??= this.check().finally(() => {
      this.checking = null
    })
    return this.checking
  }

  private async check(): Promise<void> {
    const marker = await this.deps.readMarker()
    if (marker !== null && marker === this.epoch) return
    const keys = [this.deps.markerKey]
    const args: (string | number)[] = [randomUUID(), this.shadows.length]
    for (const shadow of this.shadows) shadow.encode(keys, args)
    const reply = await this.deps.run(keys, args)
    if (!Array.isArray(reply) || typeof reply[0] !== 'string') {
      throw new Error(`unexpected reply of the re-seed script: ${JSON.stringify(reply)}`)
    }
    const [epoch, written, namespaces] = reply as [string, number, number]
    const first = this.epoch === null
    this.epoch = epoch
    // The first check of a process finds the marker set, or sets it on a new (or older) store:
    // nothing was lost then, so nothing is worth a line unless something was written.
    if (written === 0 && (first || marker !== null)) return
    this.deps.log(
      marker === null
        ? `Redis store marker key ${this.deps.markerKey} was missing (Redis lost its data): re-seeded ${written} record(s) in ${namespaces} namespace(s) from this instance's replica; counters and the blocked-request log start empty`
        : `Redis store was re-seeded by another instance: ${written} newer record(s) in ${namespaces} namespace(s) added from this instance's replica`,
    )
  }
}
