/**
 * The Queues tab: per-queue counts, state and config, each row with a Pause / Resume button and
 * an inline form that changes concurrency and max_size live (and, on a grouped or rate-limited
 * queue, the group concurrency and the rate limits). Form fields map to the API explicitly:
 * empty means unchanged, the word `unlimited` means no limit; anything else must be a whole
 * number in range (or, for a rate, a limit string such as `20/second`). Under the table, each
 * grouped queue lists its groups with the most waiting tasks.
 */
import { readLimit } from '../../../common/rate-limits/limit.js'
import { Badge, DataTable, Empty, domId } from '../../../ui/index.js'
import type { QueueConfig, QueueStats } from '../../queues/queue.js'
import type { GroupCounts } from '../../stores/ports.js'

/** The fields of a queue form. */
export type QueueField =
  'concurrency' | 'max_size' | 'group_concurrency' | 'rate_limit' | 'group_rate_limit'

/** A queue form's values as typed, and the error of each field. */
export type QueueForm = Partial<Record<QueueField, string>> & {
  errors: Partial<Record<QueueField, string>>
}

/** What a queue form asks for: the change, or the field errors. */
export type QueueChange =
  { ok: true; change: Partial<QueueConfig> } | { ok: false; errors: QueueForm['errors'] }

const COUNTS = {
  concurrency: { min: 1, max: 100_000 },
  max_size: { min: 0, max: 100_000_000 },
  group_concurrency: { min: 1, max: 100_000 },
} as const

/** The form fields of a queue: the group ones only on a grouped or rate-limited queue. */
export function queueFields(grouped: boolean): readonly QueueField[] {
  return grouped
    ? ['concurrency', 'max_size', 'group_concurrency', 'rate_limit', 'group_rate_limit']
    : ['concurrency', 'max_size']
}

/** Whether a queue has group and rate limits (and so a groups view and their fields). */
export function isGrouped(queue: QueueStats): boolean {
  return queue.group_concurrency !== undefined
}

/**
 * Parses a queue form (the same ranges as `PATCH {tasks}/queues/{name}`); the group fields
 * are read only when `grouped`.
 */
export function parseQueueForm(body: unknown, grouped = false): QueueChange {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const change: Partial<QueueConfig> = {}
  const errors: QueueForm['errors'] = {}
  for (const name of queueFields(grouped)) {
    const raw = Object.hasOwn(fields, name) ? fields[name] : undefined
    const text = typeof raw === 'string' ? raw.trim() : ''
    if (text === '') continue
    if (text.toLowerCase() === 'unlimited') {
      change[name] = null
      continue
    }
    if (name === 'rate_limit' || name === 'group_rate_limit') {
      const limit = readLimit(text, name)
      if ('detail' in limit) errors[name] = `${limit.detail} Or "unlimited".`
      else change[name] = limit.text
      continue
    }
    const { min, max } = COUNTS[name]
    const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      errors[name] =
        `Enter a whole number from ${min} to ${max.toLocaleString('en')}, or "unlimited".`
    } else {
      change[name] = value
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors }
  return { ok: true, change }
}

const limit = (value: number | string | null | undefined) =>
  value === null || value === undefined ? 'unlimited' : String(value)

/** One queue row with its inline form. */
export function QueueRow(props: {
  queue: QueueStats
  action: string
  form?: QueueForm
  /** False for a viewer: the settings as text, without the form. */
  actions: boolean
}): JSX.Element {
  const { queue } = props
  const id = domId('queue', queue.name)
  const form = props.form
  const field = (name: QueueField, label: string, visible = false) => {
    const error = form?.errors[name]
    const input = `${id}-${name}`
    return (
      <span class="inline-field">
        {visible ? (
          <label for={input} class="field-label" safe>
            {label}
          </label>
        ) : (
          <label for={input} class="visually-hidden" safe>
            {`${label} of ${queue.name}`}
          </label>
        )}
        <input
          id={input}
          name={name}
          size="9"
          inputmode={name === 'rate_limit' || name === 'group_rate_limit' ? 'text' : 'numeric'}
          aria-label={visible ? `${label} of ${queue.name}` : undefined}
          value={form === undefined ? limit(queue[name]) : (form[name] ?? '')}
          aria-invalid={error === undefined ? undefined : 'true'}
          aria-describedby={error === undefined ? undefined : `${input}-error`}
        />
        {error === undefined ? (
          ''
        ) : (
          <span class="error" id={`${input}-error`} safe>
            {error}
          </span>
        )}
      </span>
    )
  }
  return (
    <tr id={id}>
      <td class="key" safe>
        {queue.name}
      </td>
      <td>
        <span class="row-actions">
          {queue.paused ? (
            <Badge
              tone="warn"
              label="paused"
              title="No task of this queue starts on any instance"
            />
          ) : (
            <Badge tone="ok" label="active" />
          )}
          {props.actions ? (
            <button
              class="btn btn-small"
              type="button"
              hx-post={`${props.action}/${queue.paused ? 'resume' : 'pause'}`}
              hx-target={`#${id}`}
              hx-swap="outerHTML"
              aria-label={`${queue.paused ? 'Resume' : 'Pause'} queue ${queue.name}`}
            >
              {queue.paused ? 'Resume' : 'Pause'}
            </button>
          ) : (
            ''
          )}
        </span>
      </td>
      <td class="num">{queue.pending}</td>
      <td class="num">{queue.running}</td>
      <td class="num hide-narrow">{queue.finished}</td>
      <td class="num hide-narrow">{queue.rejected}</td>
      {props.actions ? (
        <QueueFormCell id={id} action={props.action} field={field} grouped={isGrouped(queue)} />
      ) : (
        <>
          <td class="num" safe>
            {limit(queue.concurrency)}
          </td>
          <td class="num">
            <span safe>{limit(queue.max_size)}</span>
            {isGrouped(queue) ? (
              <span class="muted small" safe>
                {` · per group ${limit(queue.group_concurrency)} · rate ${limit(queue.rate_limit)} · group rate ${limit(queue.group_rate_limit)}`}
              </span>
            ) : (
              ''
            )}
          </td>
        </>
      )}
    </tr>
  )
}

/** The inline form of a queue row (operators and admins). */
function QueueFormCell(props: {
  id: string
  action: string
  field: (name: QueueField, label: string, visible?: boolean) => JSX.Element
  grouped: boolean
}): JSX.Element {
  const { id, field } = props
  return (
    <td colspan="2">
      <form
        class="queue-form"
        data-keep
        hx-post={props.action}
        hx-target={`#${id}`}
        hx-swap="outerHTML"
      >
        {field('concurrency', 'Concurrency')}
        {field('max_size', 'Max size')}
        {props.grouped ? (
          <>
            {field('group_concurrency', 'Per group', true)}
            {field('rate_limit', 'Rate', true)}
            {field('group_rate_limit', 'Group rate', true)}
          </>
        ) : (
          ''
        )}
        <button class="btn btn-small" type="submit">
          Save
        </button>
      </form>
    </td>
  )
}

/** Groups listed per grouped queue in the tab. */
export const TAB_GROUP_ROWS = 10

/** One grouped queue's groups with the most waiting tasks. */
function QueueGroups(props: { queue: string; counts: GroupCounts }): JSX.Element {
  const { queue, counts } = props
  const shown = counts.groups.length
  const total = counts.total_groups
  const caption = `Groups of ${queue}`
  return (
    <div class="queue-groups">
      <h2 id={domId('groups-title', queue)} safe>
        {caption}
      </h2>
      <p class="muted small" safe>
        {total === 0
          ? 'No task waits or runs in any group.'
          : `${total.toLocaleString('en')} group${total === 1 ? '' : 's'} with waiting or running tasks${shown < total ? `; the ${shown} with the most waiting` : ''}.${counts.partial ? ' Counted over the oldest live tasks only (too many to count).' : ''}`}
      </p>
      {shown === 0 ? (
        ''
      ) : (
        <DataTable
          caption={caption}
          columns={[
            'Group',
            { label: 'Waiting', numeric: true },
            { label: 'Running', numeric: true },
          ]}
        >
          {counts.groups.map((group) => (
            <tr>
              <td class="key" safe>
                {group.group ?? '(no group)'}
              </td>
              <td class="num">{group.waiting}</td>
              <td class="num">{group.running}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  )
}

/** The Queues tab's table; follows the stream (counts change with every task). */
export function QueuesTable(props: {
  queues: readonly QueueStats[]
  /** The groups of each grouped queue, by queue name. */
  groups?: ReadonlyMap<string, GroupCounts>
  liveUrl: string
  action: (name: string) => string
  /** False for a viewer: no forms. */
  actions: boolean
}): JSX.Element {
  return (
    <div id="queues" data-live="task" data-live-url={props.liveUrl}>
      <p class="stale" data-live-stale hidden>
        Counts changed while you were editing; they show after you save or reload.
      </p>
      <DataTable
        caption="Queues"
        columns={[
          'Queue',
          'State',
          { label: 'Pending', numeric: true },
          { label: 'Running', numeric: true },
          { label: 'Finished', numeric: true, hideNarrow: true },
          { label: 'Rejected', numeric: true, hideNarrow: true },
          'Concurrency',
          'Max size',
        ]}
        empty={props.queues.length === 0 && <Empty title="No queues." />}
      >
        {props.queues.map((queue) => (
          <QueueRow queue={queue} action={props.action(queue.name)} actions={props.actions} />
        ))}
      </DataTable>
      {[...(props.groups ?? new Map<string, GroupCounts>())].map(([queue, counts]) => (
        <QueueGroups queue={queue} counts={counts} />
      ))}
    </div>
  )
}
