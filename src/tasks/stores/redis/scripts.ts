/**
 * The Redis store's Lua scripts, read from the `.lua` files next to this module (the build
 * copies them to dist), run by SHA with a fallback to EVAL when the server lost its cache.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'

/** The scripts, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'save-tasks',
  'claim-tasks',
  'renew-leases',
  'release-tasks',
  'delete-terminal',
  'delete-tasks',
  'release-key',
  'claim-keys',
  'claim-slot',
  'confirm-slot',
  'take-over-slot',
  'upsert-one-off',
  'debounce-one-off',
  'claim-one-off',
  'complete-one-off',
  'intersect',
  'difference',
  'prune-metrics',
  'read-metrics',
  'search-ids',
  'acquire-gates',
  'renew-gates',
  'group-counts',
  'save-flow',
  'create-task',
  'read-bodies',
  'flow-results',
] as const

/** One of {@link SCRIPT_NAMES}. */
export type ScriptName = (typeof SCRIPT_NAMES)[number]

/** A script's text and SHA-1. */
export interface LuaScript {
  text: string
  sha: string
}

let cache: Promise<Map<ScriptName, LuaScript>> | null = null

/** Reads every script once per process. */
export function loadScripts(): Promise<Map<ScriptName, LuaScript>> {
  cache ??= (async () => {
    const scripts = new Map<ScriptName, LuaScript>()
    const texts = new Map<ScriptName, string>()
    for (const name of SCRIPT_NAMES) {
      texts.set(name, await readFile(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8'))
    }
    // save-flow and create-task write their records with save-tasks' own text, so the scripts
    // never drift apart.
    for (const name of ['save-flow', 'create-task'] as const) {
      const text = texts.get(name) ?? ''
      let included = texts.get('save-tasks') ?? ''
      // save-flow writes each flow node's root and parent in the node's own hash (see there).
      if (name === 'save-flow') {
        const marker = 'local extraFields = {}'
        // A renamed line would silently drop the nodes' fields: fail at load instead.
        if (!included.includes(marker)) throw new Error(`save-tasks.lua lacks "${marker}"`)
        included = included.replace(marker, 'local extraFields = nodeFields')
      }
      // A function, not the text itself: a replacement string reads `$'`, `$&` and the like
      // as patterns, and save-tasks.lua's patterns hold `$`.
      texts.set(
        name,
        text.replace('--@save-tasks', () => included),
      )
    }
    for (const [name, text] of texts) {
      scripts.set(name, { text, sha: createHash('sha1').update(text).digest('hex') })
    }
    return scripts
  })()
  return cache
}
