/**
 * The Queues tab: per-queue counts, state and config, each row with a Pause / Resume button and
 * an inline form that changes concurrency and max_size live. Form fields map to the API explicitly: empty means unchanged,
 * the word `unlimited` means no limit; anything else must be a whole number in range.
 */
import { Badge, DataTable, Empty, domId } from '../../../ui/index.js'
import type { QueueConfig, QueueStats } from '../../queues/queue.js'

/** A queue form's values as typed, and the error of each field. */
export interface QueueForm {
  concurrency: string
  max_size: string
  errors: { concurrency?: string; max_size?: string }
}

/** What a queue form asks for: the change, or the field errors. */
export type QueueChange =
  { ok: true; change: Partial<QueueConfig> } | { ok: false; errors: QueueForm['errors'] }

const LIMITS = {
  concurrency: { min: 1, max: 100_000 },
  max_size: { min: 0, max: 100_000_000 },
} as const

/** Parses a queue form (the same ranges as `PATCH {tasks}/queues/{name}`). */
export function parseQueueForm(body: unknown): QueueChange {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const change: Partial<QueueConfig> = {}
  const errors: QueueForm['errors'] = {}
  for (const name of ['concurrency', 'max_size'] as const) {
    const raw = Object.hasOwn(fields, name) ? fields[name] : undefined
    const text = typeof raw === 'string' ? raw.trim() : ''
    if (text === '') continue
    if (text.toLowerCase() === 'unlimited') {
      change[name] = null
      continue
    }
    const { min, max } = LIMITS[name]
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

const limit = (value: number | null) => (value === null ? 'unlimited' : String(value))

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
  const field = (name: 'concurrency' | 'max_size', label: string) => {
    const error = form?.errors[name]
    const input = `${id}-${name}`
    return (
      <span class="inline-field">
        <label for={input} class="visually-hidden" safe>
          {`${label} of ${queue.name}`}
        </label>
        <input
          id={input}
          name={name}
          size="9"
          inputmode="numeric"
          value={form === undefined ? limit(queue[name]) : form[name]}
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
        <QueueFormCell id={id} action={props.action} field={field} />
      ) : (
        <>
          <td class="num" safe>
            {limit(queue.concurrency)}
          </td>
          <td class="num" safe>
            {limit(queue.max_size)}
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
  field: (name: 'concurrency' | 'max_size', label: string) => JSX.Element
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
        <button class="btn btn-small" type="submit">
          Save
        </button>
      </form>
    </td>
  )
}

/** The Queues tab's table; follows the stream (counts change with every task). */
export function QueuesTable(props: {
  queues: readonly QueueStats[]
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
    </div>
  )
}
