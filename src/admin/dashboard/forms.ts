/**
 * Form fields to JSON, explicitly: an empty field means "absent", the word `unlimited` means
 * null, numbers and datetimes are parsed here so the engine receives what the REST API would.
 * A field that cannot be read becomes a {@link ValidationError} naming it, shown next to it.
 */
import { ValidationError } from '../../core/errors.js'
import { CodedError } from '../../common/errors.js'

/** A parsed `application/x-www-form-urlencoded` body. */
export type FormBody = Readonly<Record<string, string | string[] | undefined>>

/** Reads a body as a form (anything else is an empty form). */
export function formOf(body: unknown): FormBody {
  return body !== null && typeof body === 'object' ? (body as FormBody) : {}
}

/** A field's raw value: the last one when repeated, '' when absent. */
export function raw(form: FormBody, name: string): string {
  const value = Object.hasOwn(form, name) ? form[name] : undefined
  if (Array.isArray(value)) return value.at(-1) ?? ''
  return value ?? ''
}

/** Every value of a repeated field (checkboxes), blanks dropped. */
export function all(form: FormBody, name: string): string[] {
  const value = Object.hasOwn(form, name) ? form[name] : undefined
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return list.map((item) => item.trim()).filter((item) => item !== '')
}

/** A trimmed text field; undefined when empty. */
export function text(form: FormBody, name: string): string | undefined {
  const value = raw(form, name).trim()
  return value === '' ? undefined : value
}

/** A limit field: undefined when empty, null for `unlimited`, else the string. */
export function limitText(form: FormBody, name: string): string | null | undefined {
  const value = text(form, name)
  if (value === undefined) return undefined
  return value.toLowerCase() === 'unlimited' ? null : value
}

/** A checkbox: true when present with any value. */
export function checked(form: FormBody, name: string): boolean {
  return raw(form, name) !== ''
}

/** A whole number field; undefined when empty. */
export function integer(form: FormBody, name: string, label = name): number | undefined {
  const value = text(form, name)
  if (value === undefined) return undefined
  if (!/^-?\d{1,15}$/.test(value)) throw fieldError(name, `${label} must be a whole number.`)
  return Number(value)
}

/** One value per line (or comma), blanks dropped. */
export function list(form: FormBody, name: string): string[] {
  return raw(form, name)
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/**
 * A datetime field. `<input type="datetime-local">` sends the browser's local wall time
 * without an offset; the page's script puts the browser's offset (minutes, as
 * `Date.getTimezoneOffset` gives it) in the `tz` field. A value with an explicit offset or
 * `Z` is taken as it is.
 */
export function datetime(form: FormBody, name: string): string | undefined {
  const value = text(form, name)
  if (value === undefined) return undefined
  if (/(Z|[+-]\d\d:?\d\d)$/i.test(value)) return value
  const match = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d))?$/.exec(value)
  if (match === null) throw fieldError(name, `Use a date and time such as 2030-01-31T14:00.`)
  const offset = Number(text(form, 'tz') ?? '0')
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0] = match
    .slice(1)
    .map((part) => Number(part) || 0)
  const utc = Date.UTC(y, mo - 1, d, h, mi, s) + (Number.isFinite(offset) ? offset : 0) * 60_000
  if (Number.isNaN(utc)) throw fieldError(name, 'Not a valid date and time.')
  return new Date(utc).toISOString()
}

/** A JSON field; undefined when empty. */
export function json(form: FormBody, name: string): unknown {
  const value = text(form, name)
  if (value === undefined) return undefined
  try {
    return JSON.parse(value) as unknown
  } catch (error) {
    throw fieldError(name, `Not valid JSON: ${(error as Error).message}`)
  }
}

/** A validation error tied to one form field. */
export function fieldError(field: string, message: string): ValidationError {
  return new ValidationError(message, { details: [{ field, message }] })
}

/** Validation messages by form field, and the message no field claims. */
export interface FormErrors {
  fields: Map<string, string>
  form: string | undefined
}

/** No errors (a fresh form). */
export const NO_ERRORS: FormErrors = { fields: new Map(), form: undefined }

/**
 * Splits an API error into messages per form field. A detail's field is a body member
 * (`reason`) or a JSON pointer (`/rules/0/clauses/0/operator`) whose first segment names the
 * form field (`rules`); `aliases` maps API names to the form's names where they differ. A
 * message no rendered field (`known`) can show goes to the form as a whole, never lost.
 */
export function formErrors(
  error: CodedError,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): FormErrors {
  const fields = new Map<string, string>()
  const details = (error.details as { details?: unknown }).details
  let unclaimed = !Array.isArray(details) || details.length === 0
  for (const detail of Array.isArray(details)
    ? (details as { field?: unknown; message?: unknown }[])
    : []) {
    const path = typeof detail.field === 'string' ? detail.field.replace(/^\//, '') : ''
    const first = path.split(/[/.]/)[0] ?? ''
    const name = Object.hasOwn(aliases, first) ? (aliases[first] as string) : first
    if (!known.includes(name) || typeof detail.message !== 'string') {
      unclaimed = true
      continue
    }
    const where = /[/.]/.test(path) ? ` (at ${path})` : ''
    const message = `${detail.message.charAt(0).toUpperCase()}${detail.message.slice(1)}${where}`
    if (!fields.has(name)) fields.set(name, message)
  }
  return { fields, form: unclaimed ? error.message : undefined }
}

/** What a bound form control shows: its name, value and error. */
export interface BoundField {
  name: string
  value: string
  error: string | undefined
}

/**
 * Binds form controls to a form: a control shows what was typed (after a refused submit), else
 * the record's current value, and the API's message for its field.
 */
export function binder(
  form: FormBody | null,
  errors: FormErrors,
): (name: string, current: string) => BoundField {
  return (name, current) => ({
    name,
    value: form === null ? current : raw(form, name),
    error: errors.fields.get(name),
  })
}
