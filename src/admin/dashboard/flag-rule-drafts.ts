/**
 * The targeting form's structured fields, read back into drafts and then into the flag's rule
 * model. A draft keeps exactly what was typed (so a refused save shows it again); turning it
 * into rules parses values, checks rollout sums, and names the row at fault in words. The
 * flag service then validates the result as the REST API does.
 *
 * Field names: `rules` (how many rows), per rule `r<i>.id`, `r<i>.description`, `r<i>.serve`
 * (a variation name, or {@link ROLLOUT} for a percentage rollout), `r<i>.track`, `r<i>.clauses`
 * (how many), per clause `r<i>.c<j>.attribute`, `.operator`, `.values`, `.negate`; a rollout's
 * weights are `<prefix>.w` (percent) paired with `<prefix>.wv` (variation), in order.
 */
import { ValidationError } from '../../core/errors.js'
import { OPERATORS, ROLLOUT_TOTAL, type Flag, type RolloutEntry } from '../../flags/model.js'
import { raw, type FormBody, type FormErrors } from './forms.js'

/** The `serve` choice meaning "a percentage rollout" (not a variation name: those are kept). */
export const ROLLOUT = '%rollout'
/** Most rows the builder accepts in one form (a flag with more is edited over the API). */
export const MAX_RULES = 200
/** Most conditions per rule the builder accepts. */
export const MAX_CLAUSES = 50

/** One condition row as typed. */
export interface ClauseDraft {
  attribute: string
  operator: string
  values: string
  negate: boolean
}

/** A percentage rollout as typed: percent text by variation name, in the flag's order. */
export type WeightsDraft = [variation: string, percent: string][]

/** One rule as typed. */
export interface RuleDraft {
  id: string
  description: string
  clauses: ClauseDraft[]
  serve: string
  weights: WeightsDraft
  track: boolean
}

/** Operators that compare numbers: their bare values are read as numbers. */
const NUMERIC = new Set(['gt', 'gte', 'lt', 'lte'])
/** Operators that compare for equality: bare numbers and true/false keep their JSON type. */
const EQUALITY = new Set(['is', 'is_not', 'in', 'not_in'])

/** A percentage as the form shows it: `25`, `12.5` (thousandths of a percent kept). */
export function percentText(weight: number): string {
  return String(weight / 1000)
}

/** A rollout's weights as a draft, one row per variation of the flag (missing ones at 0). */
export function weightsDraft(flag: Flag, rollout: readonly RolloutEntry[] | null): WeightsDraft {
  const byName = new Map((rollout ?? []).map((entry) => [entry.variation, entry.weight]))
  const rows: WeightsDraft = flag.variations.map((variation) => [
    variation.name,
    rollout === null ? '' : percentText(byName.get(variation.name) ?? 0),
  ])
  // A rollout naming a variation that no longer exists still shows, so saving reports it.
  for (const [name, weight] of byName)
    if (!flag.variations.some((variation) => variation.name === name))
      rows.push([name, percentText(weight)])
  return rows
}

/** A clause value as typed text: bare when it reads back the same, else a JSON string. */
function valueText(value: unknown, operator: string): string {
  // Clause values come from JSON, so every one has a JSON text.
  if (typeof value !== 'string') return JSON.stringify(value)
  const bare = /^[^",]*$/.test(value) && value.trim() === value && value !== ''
  return bare && JSON.stringify(parseValue(value, operator)) === JSON.stringify(value)
    ? value
    : JSON.stringify(value)
}

/** The drafts of a flag's stored rules. */
export function rulesDraft(flag: Flag): RuleDraft[] {
  return flag.rules.map((rule) => ({
    id: rule.id,
    description: rule.description,
    clauses: rule.clauses.map((clause) => ({
      attribute: clause.attribute,
      operator: clause.operator,
      values: clause.values.map((value) => valueText(value, clause.operator)).join(', '),
      negate: clause.negate ?? false,
    })),
    serve: rule.rollout === null ? (rule.variation ?? '') : ROLLOUT,
    weights: weightsDraft(flag, rule.rollout),
    track: rule.track_events,
  }))
}

/** Every value of a repeated field, blanks kept (the pairs of a rollout stay aligned). */
function values(form: FormBody, name: string): string[] {
  const value = Object.hasOwn(form, name) ? form[name] : undefined
  return Array.isArray(value) ? value : value === undefined ? [] : [value]
}

function count(form: FormBody, name: string, max: number, what: string): number {
  const text = raw(form, name).trim()
  if (text === '') return 0
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw rowError('form', `The form is damaged (${what}).`)
  if (n > max)
    throw rowError('form', `The form edits at most ${max} ${what}; use the API for more.`)
  return n
}

/** Reads a rollout's weight rows from the form. */
export function readWeights(form: FormBody, prefix: string): WeightsDraft {
  const names = values(form, `${prefix}.wv`)
  const percents = values(form, `${prefix}.w`)
  return names.map((name, index) => [name, percents[index] ?? ''])
}

/**
 * Reads the rule rows of the targeting form; a rule posted without weights gets an empty
 * weight per variation of `flag`, so its rollout editor always has a row per variation.
 */
export function readRules(form: FormBody, flag: Flag): RuleDraft[] {
  const rules: RuleDraft[] = []
  const ruleCount = count(form, 'rules', MAX_RULES, 'rules')
  for (let i = 0; i < ruleCount; i++) {
    const p = `r${i}`
    const clauses: ClauseDraft[] = []
    const clauseCount = count(form, `${p}.clauses`, MAX_CLAUSES, 'conditions per rule')
    for (let j = 0; j < clauseCount; j++) {
      const c = `${p}.c${j}`
      clauses.push({
        attribute: raw(form, `${c}.attribute`),
        operator: raw(form, `${c}.operator`),
        values: raw(form, `${c}.values`),
        negate: raw(form, `${c}.negate`) !== '',
      })
    }
    rules.push({
      id: raw(form, `${p}.id`),
      description: raw(form, `${p}.description`),
      clauses,
      serve: raw(form, `${p}.serve`),
      weights: Object.hasOwn(form, `${p}.wv`) ? readWeights(form, p) : weightsDraft(flag, null),
      track: raw(form, `${p}.track`) !== '',
    })
  }
  return rules
}

/** A builder action: add, remove or move a rule, add or remove a condition. */
export type BuilderOp =
  | { op: 'add-rule' }
  | { op: 'remove-rule' | 'up' | 'down' | 'add-clause'; rule: number }
  | { op: 'remove-clause'; rule: number; clause: number }

/** Reads the `op` field (`up:2`, `remove-clause:1:0`, …); null when it is not one. */
export function builderOp(text: string): BuilderOp | null {
  const [name = '', a, b] = text.split(':')
  const rule = Number(a)
  const clause = Number(b)
  if (name === 'add-rule') return { op: 'add-rule' }
  if (!Number.isSafeInteger(rule) || rule < 0) return null
  if (name === 'remove-rule' || name === 'up' || name === 'down' || name === 'add-clause')
    return { op: name, rule }
  if (name === 'remove-clause' && Number.isSafeInteger(clause) && clause >= 0)
    return { op: name, rule, clause }
  return null
}

/** A new empty condition row. */
export function newClause(): ClauseDraft {
  return { attribute: '', operator: 'is', values: '', negate: false }
}

/**
 * Applies a builder action to the drafts; answers the index of the rule whose controls should
 * keep the focus (null when none is left). Out-of-range actions change nothing.
 */
export function applyOp(rules: RuleDraft[], op: BuilderOp, flag: Flag): number | null {
  if (op.op === 'add-rule') {
    if (rules.length >= MAX_RULES) return rules.length - 1
    const first = flag.variations.find((v) => v.name !== flag.off_variation) ?? flag.variations[0]
    rules.push({
      id: '',
      description: '',
      clauses: [newClause()],
      serve: first?.name ?? '',
      weights: weightsDraft(flag, null),
      track: false,
    })
    return rules.length - 1
  }
  const rule = rules[op.rule]
  if (rule === undefined) return null
  switch (op.op) {
    case 'remove-rule':
      rules.splice(op.rule, 1)
      return rules.length === 0 ? null : Math.min(op.rule, rules.length - 1)
    case 'up':
    case 'down': {
      const to = op.op === 'up' ? op.rule - 1 : op.rule + 1
      if (to < 0 || to >= rules.length) return op.rule
      rules.splice(op.rule, 1)
      rules.splice(to, 0, rule)
      return to
    }
    case 'add-clause':
      if (rule.clauses.length < MAX_CLAUSES) rule.clauses.push(newClause())
      return op.rule
    case 'remove-clause':
      rule.clauses.splice(op.clause, 1)
      return op.rule
  }
}

/** A validation error tied to one row of the builder (`r1`, `r1.c0`, `fallthrough`). */
function rowError(row: string, message: string): ValidationError {
  return new ValidationError(message, { details: [{ field: row, message }] })
}

/** Splits comma-separated values; a value in double quotes is a JSON string (may hold commas). */
function splitValues(text: string): string[] | null {
  const parts: string[] = []
  let rest = text.trim()
  while (rest !== '') {
    if (rest.startsWith('"')) {
      const match = /^"(?:[^"\\]|\\.)*"/.exec(rest)
      if (match === null) return null
      parts.push(match[0])
      rest = rest.slice(match[0].length).trim()
    } else {
      const at = rest.indexOf(',')
      parts.push((at < 0 ? rest : rest.slice(0, at)).trim())
      rest = at < 0 ? '' : rest.slice(at)
    }
    if (rest.startsWith(',')) rest = rest.slice(1).trim()
    else if (rest !== '') return null
  }
  return parts.filter((part) => part !== '')
}

/** One typed value: quoted → string; bare → number / boolean where the operator compares them. */
function parseValue(part: string, operator: string): unknown {
  if (part.startsWith('"')) return JSON.parse(part) as unknown
  if (NUMERIC.has(operator) && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(part)) return Number(part)
  if (EQUALITY.has(operator)) {
    if (part === 'true' || part === 'false') return part === 'true'
    if (/^-?\d+(\.\d+)?$/.test(part)) return Number(part)
  }
  return part
}

/** Reads a rollout draft as entries; a sum other than 100 % is an error naming the sum. */
export function rolloutOf(weights: WeightsDraft, row: string): RolloutEntry[] {
  const entries: RolloutEntry[] = []
  let total = 0
  for (const [variation, text] of weights) {
    const trimmed = text.trim().replace(/\s*%$/, '')
    const percent = trimmed === '' ? 0 : Number(trimmed)
    if (!Number.isFinite(percent) || percent < 0 || percent > 100)
      throw rowError(row, `The weight of ${variation} must be a percentage from 0 to 100.`)
    const weight = Math.round(percent * 1000)
    total += weight
    if (weight > 0) entries.push({ variation, weight })
  }
  if (total !== ROLLOUT_TOTAL)
    throw rowError(
      row,
      `The weights add up to ${percentText(total)} %; they must add up to exactly 100 %.`,
    )
  return entries
}

/** The rules the drafts describe, as the flag service takes them; throws on a bad row. */
export function rulesOf(drafts: readonly RuleDraft[]): Record<string, unknown>[] {
  return drafts.map((draft, i) => {
    const clauses = draft.clauses.map((clause, j) => {
      const row = `r${i}.c${j}`
      if (clause.attribute.trim() === '')
        throw rowError(row, 'Name the attribute this condition reads (key, email, plan, …).')
      if (!(OPERATORS as readonly string[]).includes(clause.operator))
        throw rowError(row, 'Choose an operator from the list.')
      const parts = splitValues(clause.values)
      if (parts === null)
        throw rowError(row, 'A quoted value is not closed, or quoted values lack commas between.')
      if (parts.length === 0) throw rowError(row, 'Give at least one value to compare with.')
      let values: unknown[]
      try {
        values = parts.map((part) => parseValue(part, clause.operator))
      } catch {
        throw rowError(row, 'A quoted value is not valid text in quotes.')
      }
      if (NUMERIC.has(clause.operator) && values.some((value) => typeof value !== 'number'))
        throw rowError(row, `${clause.operator} compares numbers: give numbers such as 18 or 2.5.`)
      return {
        attribute: clause.attribute.trim(),
        operator: clause.operator,
        values,
        negate: clause.negate,
      }
    })
    const served =
      draft.serve === ROLLOUT
        ? { variation: null, rollout: rolloutOf(draft.weights, `r${i}`) }
        : { variation: draft.serve, rollout: null }
    return {
      ...(draft.id === '' ? {} : { id: draft.id }),
      description: draft.description,
      clauses,
      ...served,
      track_events: draft.track,
    }
  })
}

/**
 * The API's wording made readable next to a row: a schema message about a pattern or a count
 * becomes a sentence (the pattern itself is never shown).
 */
function inWords(part: string, message: string): string {
  if (/must match pattern/.test(message))
    return `${part}: use letters, digits, dot, underscore or hyphen only.`
  if (/fewer than 1 (items|characters)/.test(message))
    return part === 'values' ? 'Give at least one value.' : `${part} is required.`
  if (/allowed values|must be equal to one of/.test(message))
    return `${part}: choose one from the list.`
  const sentence = `${message.charAt(0).toUpperCase()}${message.slice(1)}`
  return part === '' ? `${sentence}.` : `${part}: ${sentence}.`
}

/**
 * Splits a save's error into messages by builder row: `r<i>.c<j>` for a condition, `r<i>` for
 * a rule, `fallthrough` and `targets`; the rest is the form's message. API details are JSON
 * pointers (`/rules/1/clauses/0/values/2`); the builder's own are row names already.
 */
export function targetingErrors(error: ValidationError | { message: string; details: unknown }) {
  const fields = new Map<string, string>()
  const details = (error.details as { details?: unknown } | undefined)?.details
  const list = Array.isArray(details)
    ? (details as { field?: unknown; message?: unknown }[])
    : ([] as { field?: unknown; message?: unknown }[])
  let unclaimed = list.length === 0
  for (const detail of list) {
    const field = typeof detail.field === 'string' ? detail.field : ''
    const message = typeof detail.message === 'string' ? detail.message : ''
    let row: string | null = null
    let text = message
    if (!field.startsWith('/')) {
      row = field === 'form' ? null : field
    } else {
      const path = field.slice(1).split('/')
      if (path[0] === 'rules' && path[1] !== undefined && /^\d+$/.test(path[1])) {
        if (path[2] === 'clauses' && path[3] !== undefined && /^\d+$/.test(path[3])) {
          row = `r${path[1]}.c${path[3]}`
          text = inWords(path[4] ?? '', message)
        } else {
          row = `r${path[1]}`
          text = inWords(path[2] ?? '', message)
        }
      } else if (path[0] === 'fallthrough' || path[0] === 'targets') {
        row = path[0]
        text = inWords('', message)
      } else if (path[0] === 'rules') {
        row = 'rules'
        text = inWords('', message)
      }
    }
    if (row === null || message === '') {
      unclaimed = true
      continue
    }
    if (!fields.has(row)) fields.set(row, text)
  }
  const result: FormErrors = { fields, form: unclaimed ? error.message : undefined }
  return result
}
