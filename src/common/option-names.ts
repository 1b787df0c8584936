/**
 * Unknown option names: a misspelt option (`retires: 3`) would otherwise be ignored silently and
 * the default used. Every place that takes an options object names the options it knows as a
 * `Record<keyof Options, true>` — the compiler then insists the list is complete — and refuses
 * any other name with the list of known ones. Each half throws its own error class with the
 * message built here.
 */

/** Names a Fastify plugin receives next to its own options (the encapsulation options). */
export const FASTIFY_PLUGIN_OPTION_NAMES: readonly string[] = [
  'prefix',
  'logLevel',
  'logSerializers',
]

/**
 * The message for the names of `options` that `known` does not hold, or null when every name is
 * known. `what` names the options, e.g. `task` or `TaskManager`.
 */
export function unknownOptionsMessage(
  what: string,
  options: object,
  known: Readonly<Record<string, true>>,
  alsoAllowed: readonly string[] = [],
): string | null {
  const unknown = Object.keys(options).filter(
    (name) => !Object.hasOwn(known, name) && !alsoAllowed.includes(name),
  )
  if (unknown.length === 0) return null
  const list = unknown.map((name) => JSON.stringify(name)).join(', ')
  return `Unknown ${what} option${unknown.length === 1 ? '' : 's'} ${list}. Known options: ${Object.keys(known).join(', ')}.`
}

/** {@link unknownOptionsMessage} for the options of a Fastify plugin, which carry Fastify's too. */
export function unknownPluginOptionsMessage(
  plugin: string,
  options: object,
  known: Readonly<Record<string, true>>,
): string | null {
  return unknownOptionsMessage(plugin, options, known, FASTIFY_PLUGIN_OPTION_NAMES)
}
