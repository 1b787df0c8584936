/**
 * Small pieces of the task dashboard: status badges, the progress bar, durations, tags, and
 * the log view (levels coloured with their word, retry markers as separators).
 */
import { Badge, formatDuration, type Tone } from '../../../ui/index.js'
import type { TaskRecord } from '../../record.js'
import { RETRYABLE_STATUSES, type TaskStatus } from '../../status.js'

const STATUS_TONE: Readonly<Record<TaskStatus, Tone>> = {
  pending: 'plain',
  running: 'info',
  success: 'ok',
  failed: 'bad',
  cancelled: 'warn',
  interrupted: 'warn',
  rejected: 'purple',
  expired: 'warn',
}

/**
 * Whether the dashboard offers a retry of `record`: failed or interrupted, and not retried yet
 * (a record is retried once; its newer run is the one to retry).
 */
export function offersRetry(record: TaskRecord): boolean {
  return RETRYABLE_STATUSES.has(record.status) && record.retried_as === null
}

/**
 * The retry lineage of a record as links: "retried → <id>" to the run that retried it, "retry
 * of <id>" to the run it retries; nothing for a record with neither.
 */
export function Lineage(props: {
  record: TaskRecord
  /** The detail page's URL of a task id. */
  href: (taskId: string) => string
}): JSX.Element {
  const { record, href } = props
  if (record.retry_of === null && record.retried_as === null) return <></>
  return (
    <div class="muted lineage">
      {record.retry_of === null ? (
        ''
      ) : (
        <span>
          retry of{' '}
          <a class="mono" href={href(record.retry_of)} safe>
            {record.retry_of}
          </a>
        </span>
      )}
      {record.retry_of !== null && record.retried_as !== null ? ' · ' : ''}
      {record.retried_as === null ? (
        ''
      ) : (
        <span>
          retried →{' '}
          <a class="mono" href={href(record.retried_as)} safe>
            {record.retried_as}
          </a>
        </span>
      )}
    </div>
  )
}

/** Characters of a long value shown before "show all". */
const VALUE_PREVIEW_CHARS = 200

/**
 * A value's text (arguments, a result): short ones as they are, long ones cut with the whole
 * text behind a "show all" disclosure (no script needed).
 */
export function LongValue(props: { text: string; note?: string }): JSX.Element {
  const { text } = props
  if (text.length <= VALUE_PREVIEW_CHARS) {
    return (
      <code class="mono" safe>
        {text + (props.note ?? '')}
      </code>
    )
  }
  return (
    <details class="long-value">
      <summary>
        <code class="mono" safe>
          {`${text.slice(0, VALUE_PREVIEW_CHARS)}…`}
        </code>{' '}
        <span class="muted">show all</span>
      </summary>
      <pre class="mono" safe>
        {text + (props.note ?? '')}
      </pre>
    </details>
  )
}

/** A task status as a badge with its word. */
export function StatusBadge(props: { status: TaskStatus }): JSX.Element {
  return <Badge tone={STATUS_TONE[props.status]} label={props.status} />
}

/** The task's own progress (0..1) as a bar with its percentage and message; nothing without. */
export function ProgressBar(props: { record: TaskRecord }): JSX.Element {
  const { progress, progress_message: message } = props.record
  if (progress === null) return <></>
  const percent = Math.round(Math.min(1, Math.max(0, progress)) * 100)
  return (
    <span class="progress" title={message ?? undefined}>
      <progress max="100" value={String(percent)} aria-label={`Progress ${percent}%`}></progress>
      <span class="progress-text" safe>
        {message === null ? `${percent}%` : `${percent}% · ${message}`}
      </span>
    </span>
  )
}

/** The run time of a task: its duration once finished, `running` / `—` before. */
export function Duration(props: { record: TaskRecord }): JSX.Element {
  const { record } = props
  if (record.end_time !== null) return <span safe>{formatDuration(record.duration * 1000)}</span>
  return <span class="muted">{record.status === 'running' ? 'running' : '—'}</span>
}

/** Tags as `key=value` chips. */
export function Tags(props: { tags: Readonly<Record<string, string>> }): JSX.Element {
  const entries = Object.entries(props.tags)
  if (entries.length === 0) return <span class="muted">—</span>
  return (
    <span class="tags">
      {entries.map(([key, value]) => (
        <code class="tag" safe>{`${key}=${value}`}</code>
      ))}
    </span>
  )
}

const LOG_LINE = /^(\S+) \[(debug|info|warning|error)\] ([\s\S]*)$/
const RETRY_MARKER = /^--- retry (\d+) ---$/

/** The log lines of a record: time, level badge and message; retry markers as separators. */
export function LogLines(props: { logs: readonly string[] }): JSX.Element {
  if (props.logs.length === 0) return <p class="muted">No log lines.</p>
  return (
    <ol class="logs">
      {props.logs.map((line) => {
        const retry = RETRY_MARKER.exec(line)
        if (retry !== null)
          return (
            <li class="log-retry" safe>
              {`Retry ${retry[1] ?? ''}`}
            </li>
          )
        const parsed = LOG_LINE.exec(line)
        if (parsed === null)
          return (
            <li class="log-line" safe>
              {line}
            </li>
          )
        const [, at = '', level = 'info', message = ''] = parsed
        return (
          <li class={`log-line log-${level}`}>
            <time class="mono muted" datetime={at} safe>
              {at.slice(11, 23)}
            </time>{' '}
            <span class="log-level" safe>
              {level}
            </span>{' '}
            <span class="log-message" safe>
              {message}
            </span>
          </li>
        )
      })}
    </ol>
  )
}

/** What a {@link RetrySelectionForm} says: its notice, its confirmation and its button. */
export interface RetryWording {
  /** Shown when live changes arrived while the operator was selecting. */
  staleNotice: string
  /** The question asked before the request is sent. */
  confirm: string
  /** The submit button's label. */
  submitLabel: string
}

/**
 * The form around a table of selectable tasks that retries the selection in one request. Live
 * updates leave a form with a selection alone (`data-keep`); the hidden notice shows when
 * changes arrived meanwhile. The submit button shows only when the table has rows.
 */
export function RetrySelectionForm(props: {
  action: string
  wording: RetryWording
  hasRows: boolean
  /** False for a viewer: the table alone, without the form and its button. */
  actions: boolean
  children: JSX.Element | JSX.Element[]
}): JSX.Element {
  const { wording } = props
  // Children are JSX elements, escaped where they were built.
  const safeTable = props.children
  if (!props.actions) return <>{safeTable}</>
  return (
    // The confirmation sits on the form: htmx asks for the element that sends the request.
    // Not inherited: the live refreshes of the rows inside it must never ask.
    <form
      data-keep
      hx-post={props.action}
      hx-swap="none"
      hx-confirm={wording.confirm}
      hx-disinherit="hx-confirm"
    >
      <p class="stale" data-live-stale hidden safe>
        {wording.staleNotice}
      </p>
      {safeTable}
      {props.hasRows ? (
        <div class="form-actions">
          <button class="btn" type="submit" safe>
            {wording.submitLabel}
          </button>
        </div>
      ) : (
        ''
      )}
    </form>
  )
}
