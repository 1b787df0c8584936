/**
 * The History tab of a flag's page: its pending scheduled changes (each with a Cancel button,
 * and a small form to schedule an enable or a disable), then its kept versions newest first
 * (version, when, actor, what changed), each older one with "Roll back to this version".
 * Actions are the operator's: a viewer sees the same lists without buttons or form. Every
 * action asks first in the app's dialog, naming what will happen.
 */
import type { Flag, ScheduledChange } from '../../flags/model.js'
import type { FlagVersion } from '../../flags/ports.js'
import { versionSummary } from '../../flags/history.js'
import {
  DataTable,
  Empty,
  Field,
  FormError,
  formatAbsolute,
  invalid,
  Time,
} from '../../ui/index.js'
import { raw, type FormBody, type FormErrors } from './forms.js'
import type { Dashboard } from './view.js'

/** What the History tab shows besides the flag: its versions and the schedule form's state. */
export interface FlagHistoryData {
  /** The kept versions, newest first. */
  versions: readonly FlagVersion[]
  /** The schedule form as typed (after a refused submit), else null. */
  form: FormBody | null
  errors: FormErrors
}

/** The fields of the schedule form (an API error on another field goes to the form). */
export const SCHEDULE_FIELDS: readonly string[] = ['action', 'at']

/** A scheduled change in words: `turn on`, `turn off`, or `update description, rules`. */
export function scheduledChangeSummary(change: ScheduledChange): string {
  if (change.action === 'enable') return 'turn on'
  if (change.action === 'disable') return 'turn off'
  const fields = Object.keys(change.patch ?? {})
  return fields.length === 0 ? 'update' : `update ${fields.join(', ')}`
}

/** The History tab: scheduled changes, then versions. */
export function FlagHistoryTab(props: {
  dashboard: Dashboard
  flag: Flag
  history: FlagHistoryData
}): JSX.Element {
  return (
    <>
      <ScheduledChanges {...props} />
      <VersionHistory {...props} />
    </>
  )
}

function ScheduledChanges(props: {
  dashboard: Dashboard
  flag: Flag
  history: FlagHistoryData
}): JSX.Element {
  const { dashboard, flag } = props
  const operator = dashboard.can('operator')
  const base = `/flags/${encodeURIComponent(flag.key)}`
  const pending = [...flag.scheduled_changes].sort(
    (a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id),
  )
  const columns = operator ? ['When', 'Change', 'Actions'] : ['When', 'Change']
  return (
    <section aria-labelledby="scheduled-title">
      <h2 id="scheduled-title">Scheduled changes</h2>
      <DataTable
        caption={`Scheduled changes of ${flag.key}`}
        columns={columns}
        empty={
          pending.length === 0 && (
            <Empty title="No scheduled changes.">
              <p class="muted">
                {operator
                  ? 'Schedule one below: the flag is turned on or off at that time, once, by one instance.'
                  : 'An operator can schedule the flag to turn on or off at a given time.'}
              </p>
            </Empty>
          )
        }
      >
        {pending.map((change) => {
          const summary = scheduledChangeSummary(change)
          const when = formatAbsolute(Date.parse(change.at))
          return (
            <tr id={`scheduled-${change.id}`}>
              <td>
                <Time at={change.at} />
              </td>
              <td safe>{summary}</td>
              {operator ? (
                <td>
                  <button
                    class="btn btn-small"
                    hx-post={dashboard.url(
                      `${base}/schedule/${encodeURIComponent(change.id)}/cancel`,
                    )}
                    hx-target="#flag-view"
                    hx-swap="outerHTML"
                    hx-confirm={`Cancel the scheduled change of ${flag.key}: ${summary} at ${when}? It will not apply.`}
                    data-confirm-label="Cancel the change"
                  >
                    Cancel
                    <span class="visually-hidden" safe>{` ${summary} at ${when}`}</span>
                  </button>
                </td>
              ) : (
                ''
              )}
            </tr>
          )
        })}
      </DataTable>
      {operator ? <ScheduleForm {...props} /> : ''}
    </section>
  )
}

/** The small form that schedules an enable or a disable (updates are the API's and the CLI's). */
function ScheduleForm(props: {
  dashboard: Dashboard
  flag: Flag
  history: FlagHistoryData
}): JSX.Element {
  const { dashboard, flag } = props
  const { form, errors } = props.history
  const value = (name: string) => (form === null ? '' : raw(form, name))
  const action = value('action') === 'enable' ? 'enable' : 'disable'
  const atError = errors.fields.get('at')
  const actionError = errors.fields.get('action')
  return (
    <form
      id="flag-schedule-form"
      class="schedule-form"
      hx-post={dashboard.url(`/flags/${encodeURIComponent(flag.key)}/schedule`)}
      hx-target="#flag-view"
      hx-swap="outerHTML"
      data-keep
    >
      <h3>Schedule a change</h3>
      <FormError message={errors.form} />
      <input type="hidden" name="tz" value={value('tz')} data-tz />
      <div class="form-grid">
        <Field label="Action" for="s-action" error={actionError}>
          <select id="s-action" name="action" {...invalid('s-action', actionError)}>
            <option value="enable" selected={action === 'enable'}>
              Turn on
            </option>
            <option value="disable" selected={action === 'disable'}>
              Turn off
            </option>
          </select>
        </Field>
        <Field label="At" for="s-at" error={atError} hint="Your local time, in the future.">
          <input
            id="s-at"
            type="datetime-local"
            name="at"
            value={value('at')}
            required
            {...invalid('s-at', atError)}
          />
        </Field>
      </div>
      <div class="form-actions">
        <button class="btn btn-primary" type="submit">
          Schedule
        </button>
      </div>
    </form>
  )
}

function VersionHistory(props: {
  dashboard: Dashboard
  flag: Flag
  history: FlagHistoryData
}): JSX.Element {
  const { dashboard, flag } = props
  const { versions } = props.history
  const operator = dashboard.can('operator')
  const latest = versions[0]?.version ?? 0
  const columns = [
    { label: 'Version', numeric: true },
    'When',
    'Actor',
    'Change',
    ...(operator ? ['Actions'] : []),
  ]
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <DataTable
        caption={`Versions of ${flag.key}, newest first`}
        columns={columns}
        empty={
          versions.length === 0 && (
            <Empty title="No versions kept.">
              <p class="muted">Every write of the flag from now on keeps a version here.</p>
            </Empty>
          )
        }
      >
        {versions.map((entry, index) => (
          <tr id={`version-${entry.version}`}>
            <td class="num">{entry.version}</td>
            <td>
              <Time at={entry.changed_at} />
            </td>
            <td class="mono" safe>
              {entry.actor}
            </td>
            <td safe>{versionSummary(entry, versions[index + 1])}</td>
            {operator ? (
              <td>
                {index === 0 ? (
                  <span class="muted">current</span>
                ) : (
                  <button
                    class="btn btn-small"
                    hx-post={dashboard.url(`/flags/${encodeURIComponent(flag.key)}/rollback`)}
                    hx-vals={JSON.stringify({ version: String(entry.version) })}
                    hx-target="#flag-view"
                    hx-swap="outerHTML"
                    hx-confirm={`Roll ${flag.key} back to version ${entry.version}? This writes version ${latest + 1} equal to it; its pending scheduled changes stay as they are.`}
                    data-confirm-label={`Roll back to version ${entry.version}`}
                  >
                    Roll back to this version
                    <span class="visually-hidden" safe>{` (version ${entry.version})`}</span>
                  </button>
                )}
              </td>
            ) : (
              ''
            )}
          </tr>
        ))}
      </DataTable>
    </section>
  )
}
