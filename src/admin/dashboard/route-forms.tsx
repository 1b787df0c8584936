/**
 * The forms of the routes page, shown in the action dialog: disable (reason, until),
 * maintenance (reason, window), schedule (start, end, reason), and global or service
 * maintenance (reason, exemptions, force-active). A failed submit answers 422 with the form
 * again: what was typed is kept and the API's message sits next to its field.
 */
import type { MaintenanceConfig } from '../../core/maintenance.js'
import { ClockTime, DialogContent, Field, FormError, invalid } from '../../ui/index.js'
import { raw, type FormBody, type FormErrors } from './forms.js'
import type { Dashboard } from './view.js'

/** A route action that needs a form. */
export type RouteFormKind = 'disable' | 'maintenance' | 'schedule'

const TITLES: Record<RouteFormKind, string> = {
  disable: 'Disable',
  maintenance: 'Maintenance for',
  schedule: 'Schedule maintenance of',
}

/** The fields each form shows (errors on other fields go to the form as a whole). */
export const ROUTE_FORM_FIELDS: Record<RouteFormKind, readonly string[]> = {
  disable: ['reason', 'until'],
  maintenance: ['reason', 'start', 'end'],
  schedule: ['reason', 'start', 'end'],
}

function DateField(props: {
  name: string
  label: string
  form: FormBody
  errors: FormErrors
  hint: string
}): JSX.Element {
  const id = `f-${props.name}`
  const error = props.errors.fields.get(props.name)
  return (
    <Field label={props.label} for={id} error={error} hint={props.hint}>
      <input
        id={id}
        type="datetime-local"
        name={props.name}
        value={raw(props.form, props.name)}
        {...invalid(id, error)}
      />
    </Field>
  )
}

/** The disable / maintenance / schedule form of one route. */
export function RouteForm(props: {
  dashboard: Dashboard
  kind: RouteFormKind
  route: string
  service: string
  form: FormBody
  errors: FormErrors
}): JSX.Element {
  const { dashboard, kind, route, service, form, errors } = props
  const reasonError = errors.fields.get('reason')
  const submit = {
    disable: `Disable ${route}`,
    maintenance: `Put ${route} in maintenance`,
    schedule: `Schedule the window`,
  }[kind]
  return (
    <form
      id="route-form"
      hx-post={dashboard.url(`/routes/${kind}`)}
      hx-target="this"
      hx-swap="outerHTML"
      data-keep
    >
      <DialogContent title={`${TITLES[kind]} ${route}`}>
        <p class="muted" safe>{`Service ${service}`}</p>
        <FormError message={errors.form} />
        <input type="hidden" name="route" value={route} />
        <input type="hidden" name="service" value={service} />
        <input type="hidden" name="tz" value={raw(form, 'tz')} data-tz />
        <Field
          label="Reason"
          for="f-reason"
          error={reasonError}
          hint="Shown to callers in the 503 body."
        >
          <input
            id="f-reason"
            name="reason"
            value={raw(form, 'reason')}
            maxlength="500"
            autofocus
            {...invalid('f-reason', reasonError)}
          />
        </Field>
        {kind === 'disable' ? (
          <DateField
            name="until"
            label="Until (optional)"
            form={form}
            errors={errors}
            hint="Your local time; the route is enabled again then."
          />
        ) : (
          <div class="form-grid">
            <DateField
              name="start"
              label={kind === 'schedule' ? 'Start' : 'Start (optional)'}
              form={form}
              errors={errors}
              hint={kind === 'schedule' ? 'Your local time, in the future.' : 'Empty: now.'}
            />
            <DateField
              name="end"
              label={kind === 'schedule' ? 'End' : 'End (optional)'}
              form={form}
              errors={errors}
              hint={kind === 'schedule' ? 'After the start.' : 'Empty: until turned off.'}
            />
          </div>
        )}
        <div class="form-actions">
          <button
            class={`btn ${kind === 'disable' ? 'btn-danger' : 'btn-primary'}`}
            type="submit"
            safe
          >
            {submit}
          </button>
          <button class="btn" type="button" data-dialog-close>
            Cancel
          </button>
        </div>
      </DialogContent>
    </form>
  )
}

/** The fields of the maintenance form. */
export const MAINTENANCE_FIELDS = [
  'reason',
  'exempt_paths',
  'include_force_active',
  'path',
  'ends_at',
]

/** The end-time presets of the maintenance dialog (`duration` values; '' = until turned off). */
export const MAINTENANCE_ENDS: readonly (readonly [string, string])[] = [
  ['30m', '30 min'],
  ['1h', '1 h'],
  ['4h', '4 h'],
  ['', 'Until I end it'],
]

/** The `duration` value that keeps the end time already set (saving other settings). */
export const KEEP_END = 'keep'

/** Global (service null) or service maintenance: turn on with its settings, manage exemptions. */
export function MaintenanceForm(props: {
  dashboard: Dashboard
  service: string | null
  config: MaintenanceConfig
  form: FormBody | null
  errors: FormErrors
}): JSX.Element {
  const { dashboard, service, config, form, errors } = props
  const scope = service === null ? 'every service' : `service ${service}`
  const title = service === null ? 'Global maintenance' : `Maintenance of ${service}`
  const value = (name: string, fallback: string) => (form === null ? fallback : raw(form, name))
  const reasonError = errors.fields.get('reason')
  const pathError = errors.fields.get('path')
  const hidden = service === null ? '' : <input type="hidden" name="service" value={service} />
  return (
    <div id="maintenance-form">
      <DialogContent title={title}>
        <FormError message={errors.form} />
        <p>
          Status: <strong>{config.active ? 'ON' : 'off'}</strong>
          {config.active && typeof config.ends_at === 'string' ? (
            <>
              {' '}
              until <ClockTime at={config.ends_at} />
            </>
          ) : (
            ''
          )}
        </p>
        <form
          hx-post={dashboard.url('/maintenance/enable')}
          hx-target="#maintenance-form"
          hx-swap="outerHTML"
          data-keep
        >
          {hidden}
          <Field label="Reason" for="m-reason" error={reasonError}>
            <input
              id="m-reason"
              name="reason"
              value={value('reason', config.reason)}
              maxlength="500"
              {...invalid('m-reason', reasonError)}
            />
          </Field>
          <EndsField config={config} form={form} error={errors.fields.get('ends_at')} />
          <div class="field field-check">
            <input
              id="m-force"
              type="checkbox"
              name="include_force_active"
              value="1"
              checked={
                form === null
                  ? config.include_force_active
                  : raw(form, 'include_force_active') !== ''
              }
            />
            <label for="m-force">Include force-active routes</label>
          </div>
          <div class="form-actions">
            <button class="btn btn-danger" type="submit" safe>
              {config.active ? 'Save maintenance settings' : `Put ${scope} in maintenance`}
            </button>
            {config.active ? (
              <button
                class="btn"
                type="button"
                hx-post={dashboard.url('/maintenance/disable')}
                hx-vals={JSON.stringify(service === null ? {} : { service })}
                hx-swap="none"
              >
                Turn off
              </button>
            ) : (
              ''
            )}
          </div>
        </form>
        <h3>Exemptions</h3>
        <p class="muted">
          Exempt paths keep answering while maintenance is on. Adding or removing one never turns
          maintenance on or off.
        </p>
        {config.exempt_paths.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <ul>
            {config.exempt_paths.map((path) => (
              <li>
                <span class="mono" safe>
                  {path}
                </span>{' '}
                <button
                  class="btn btn-small"
                  hx-post={dashboard.url('/maintenance/exempt-remove')}
                  hx-vals={JSON.stringify({ path, ...(service === null ? {} : { service }) })}
                  hx-target="#maintenance-form"
                  hx-swap="outerHTML"
                  aria-label={`Remove ${path}`}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        <form
          class="filters"
          hx-post={dashboard.url('/maintenance/exempt-add')}
          hx-target="#maintenance-form"
          hx-swap="outerHTML"
        >
          {hidden}
          <Field label="Add an exemption" for="m-path" error={pathError}>
            <input
              id="m-path"
              name="path"
              placeholder="/health"
              {...invalid('m-path', pathError)}
            />
          </Field>
          <button class="btn" type="submit">
            Add
          </button>
        </form>
      </DialogContent>
    </div>
  )
}

/**
 * When maintenance ends: presets (30 min, 1 h, 4 h, until turned off); while on with an end
 * time, keeping that end is the default, so saving other settings never moves it.
 */
function EndsField(props: {
  config: MaintenanceConfig
  form: FormBody | null
  error: string | undefined
}): JSX.Element {
  const { config, form, error } = props
  const current = config.active && typeof config.ends_at === 'string' ? config.ends_at : null
  const options: [string, JSX.Element | string][] = [
    ...(current === null
      ? []
      : [
          [
            KEEP_END,
            <>
              Keep (until <ClockTime at={current} />)
            </>,
          ] as [string, JSX.Element],
        ]),
    ...MAINTENANCE_ENDS.map(([value, label]) => [value, label] as [string, string]),
  ]
  const chosen = form === null ? (current === null ? '' : KEEP_END) : raw(form, 'duration')
  return (
    <fieldset
      class="field field-choices"
      aria-describedby={error === undefined ? undefined : 'm-ends-error'}
    >
      <legend>Ends</legend>
      {options.map(([value, label], index) => (
        <label class="choice">
          <input
            type="radio"
            name="duration"
            value={value}
            id={`m-ends-${index}`}
            checked={chosen === value}
          />{' '}
          {label}
        </label>
      ))}
      {error === undefined ? (
        ''
      ) : (
        <span class="error" id="m-ends-error" safe>
          {error}
        </span>
      )}
    </fieldset>
  )
}
