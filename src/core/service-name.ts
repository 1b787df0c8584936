/**
 * Service names: one rule wherever a name is accepted — routes, maintenance, rate-limit scopes,
 * the admin API's parameters and bodies. Lower-case letters and digits, then also `.`, `_` and
 * `-`, at most 63 characters in all.
 *
 * Why so strict: a service name becomes part of audit labels (`[payments Maintenance]`),
 * counter scopes and Redis key names, file-store sections and URLs, so it must not carry
 * separators, spaces, upper-case twins of another name, or names such as `__proto__` that a
 * plain object would treat specially.
 */
import { ValidationError } from './errors.js'

/** The rule as a JSON-schema / RegExp source. */
export const SERVICE_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,62}$'

const rule = new RegExp(SERVICE_NAME_PATTERN)

/** True when `value` is a valid service name. */
export function isServiceName(value: unknown): value is string {
  return typeof value === 'string' && rule.test(value)
}

/**
 * Returns `value` when it is a valid service name; throws {@link ValidationError} (on `field`)
 * otherwise.
 *
 * @example
 * checkServiceName('payments') // 'payments'
 * checkServiceName('Payments') // throws ValidationError
 */
export function checkServiceName(value: unknown, field = 'service'): string {
  if (isServiceName(value)) return value
  throw new ValidationError(
    `Invalid service name ${JSON.stringify(value)}: use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit (at most 63 characters).`,
    { details: [{ field, message: `expected a service name matching ${SERVICE_NAME_PATTERN}` }] },
  )
}
