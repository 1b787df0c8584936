/**
 * Small building blocks shared by both dashboards: status badges, times that read themselves,
 * empty states, pagination, form fields with their error, tabs, the search box.
 */
import { formatAbsolute, formatRelative } from './time.js'

/** Colour families of a badge; the word is always shown too, never colour alone. */
export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'purple' | 'plain'

/** A status badge: a coloured pill with its word. */
export function Badge(props: { tone: Tone; label: string; title?: string }): JSX.Element {
  return (
    <span class={`badge badge-${props.tone}`} title={props.title} safe>
      {props.label}
    </span>
  )
}

/**
 * A point in time: relative text ("3 min ago", "in 2 h"), the exact local and UTC time on
 * hover (set by the page's script, which also keeps the relative text current).
 */
export function Time(props: { at: string | number | null; now?: number; empty?: string }) {
  if (props.at === null)
    return (
      <span class="muted" safe>
        {props.empty ?? '—'}
      </span>
    )
  const at = typeof props.at === 'number' ? props.at : Date.parse(props.at)
  if (Number.isNaN(at)) return <span safe>{String(props.at)}</span>
  const iso = new Date(at).toISOString()
  return (
    <time datetime={iso} data-relative title={formatAbsolute(at)} safe>
      {formatRelative(at, props.now ?? Date.now())}
    </time>
  )
}

/**
 * A wall-clock time ("14:30"): UTC from the server, the reader's local time once the page's
 * script runs; the full local and UTC time on hover.
 */
export function ClockTime(props: { at: string | number }): JSX.Element {
  const at = typeof props.at === 'number' ? props.at : Date.parse(props.at)
  if (Number.isNaN(at)) return <span safe>{String(props.at)}</span>
  const iso = new Date(at).toISOString()
  return (
    <time datetime={iso} data-clock title={formatAbsolute(at)} safe>
      {`${iso.slice(11, 16)} UTC`}
    </time>
  )
}

/** A table cell holding a {@link Time}; with `hideNarrow` it hides on narrow screens like its column. */
export function TimeCell(props: Parameters<typeof Time>[0] & { hideNarrow?: boolean }) {
  const { hideNarrow, ...time } = props
  return (
    <td class={hideNarrow === true ? 'hide-narrow' : undefined}>
      <Time {...time} />
    </td>
  )
}

/** A designed empty state: what is missing, and what to do about it. */
export function Empty(props: { title: string; children?: JSX.Element | JSX.Element[] }) {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  return (
    <div class="empty">
      <strong safe>{props.title}</strong>
      {safeChildren}
    </div>
  )
}

/** Long text cut to one line, the full text on hover. */
export function Truncated(props: { text: string; class?: string }): JSX.Element {
  if (props.text === '') return <span class="muted">—</span>
  return (
    <span class={`truncate ${props.class ?? ''}`} title={props.text} safe>
      {props.text}
    </span>
  )
}

/** Previous / next links of a paginated list; `href(page)` builds each page's URL. */
export function Pager(props: {
  page: number
  perPage: number
  total: number
  /** The count stopped at `total`: at least that many (shown as "≥ total"). */
  totalCapped?: boolean | undefined
  href: (page: number) => string
}): JSX.Element {
  const capped = props.totalCapped === true
  // A capped count has more beyond it: one more page at least.
  const pages = Math.max(1, Math.ceil(props.total / props.perPage) + (capped ? 1 : 0))
  if (pages <= 1) return <></>
  const first = (props.page - 1) * props.perPage + 1
  const last = Math.min(props.total, props.page * props.perPage)
  return (
    <nav class="pager" aria-label="Pages">
      <span>
        {first}–{last} of{' '}
        {capped ? (
          <span title="At least this many: counting stops there so the page stays fast">
            ≥ {props.total}
          </span>
        ) : (
          props.total
        )}
      </span>
      {props.page > 1 ? (
        <a class="btn btn-small" href={props.href(props.page - 1)} rel="prev">
          ← Newer
        </a>
      ) : (
        ''
      )}
      {props.page < pages ? (
        <a class="btn btn-small" href={props.href(props.page + 1)} rel="next">
          Older →
        </a>
      ) : (
        ''
      )}
    </nav>
  )
}

/** The {@link Pager} of a list page's result; nothing while there is none (it failed to load). */
export function ListPager(props: {
  list: { page: number; total: number; total_capped?: boolean | undefined } | null
  perPage: number
  href: (page: number) => string
}): JSX.Element {
  if (props.list === null) return <></>
  return (
    <Pager
      page={props.list.page}
      perPage={props.perPage}
      total={props.list.total}
      totalCapped={props.list.total_capped}
      href={props.href}
    />
  )
}

/** A page's heading row: its `h1` and, beside it, the page's actions (links, buttons). */
export function PageHead(props: {
  title: string
  children?: JSX.Element | JSX.Element[]
}): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  return (
    <div class="page-head">
      <h1 safe>{props.title}</h1>
      {safeChildren === undefined ? '' : <div class="actions">{safeChildren}</div>}
    </div>
  )
}

/** A labelled form field with its hint and the API's validation message. */
export function Field(props: {
  label: string
  /** The id of the control inside (for `<label for>`). */
  for: string
  error?: string | undefined
  hint?: string
  children: JSX.Element | JSX.Element[]
}): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  return (
    <div class="field">
      <label for={props.for} safe>
        {props.label}
      </label>
      {safeChildren}
      {props.hint === undefined ? (
        ''
      ) : (
        <span class="hint" id={`${props.for}-hint`} safe>
          {props.hint}
        </span>
      )}
      {props.error === undefined ? (
        ''
      ) : (
        <span class="error" id={`${props.for}-error`} safe>
          {props.error}
        </span>
      )}
    </div>
  )
}

/** ARIA attributes of a control whose field may carry an error. */
export function invalid(id: string, error: string | undefined): Record<string, string> {
  return error === undefined ? {} : { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` }
}

/** A form-wide error (one the API did not tie to a field). */
export function FormError(props: { message: string | undefined }): JSX.Element {
  if (props.message === undefined) return <></>
  return (
    <div class="form-error" role="alert" safe>
      {props.message}
    </div>
  )
}

/** A form's buttons: the primary submit button labelled `submit`, then `cancel` if it has one. */
export function FormActions(props: { submit: string; cancel?: JSX.Element }): JSX.Element {
  // The cancel link or button is a JSX element, escaped where it was built.
  const safeCancel = props.cancel ?? ''
  return (
    <div class="form-actions">
      <button class="btn btn-primary" type="submit" safe>
        {props.submit}
      </button>
      {safeCancel}
    </div>
  )
}

/**
 * The username and password fields and the submit button of a login form (each dashboard
 * wraps them in its own form: where it posts and how it reports a failure differ).
 */
export function LoginFields(props: { username?: string | undefined }): JSX.Element {
  return (
    <>
      <Field label="Username" for="login-username">
        <input
          id="login-username"
          name="username"
          autocomplete="username"
          required
          autofocus
          value={props.username}
        />
      </Field>
      <Field label="Password" for="login-password">
        <input
          id="login-password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
      </Field>
      <FormActions submit="Log in" />
    </>
  )
}

/** One option of a {@link FilterSelect}. */
export interface FilterOption {
  value: string
  label: string
}

/**
 * A select of a filter bar; it submits its form on change. With `any`, a first option of value
 * '' stands for "no filter".
 */
export function FilterSelect(props: {
  id: string
  name: string
  label: string
  value: string
  any?: string
  options: readonly FilterOption[]
}): JSX.Element {
  return (
    <div class="field">
      <label for={props.id} safe>
        {props.label}
      </label>
      <select id={props.id} name={props.name} data-autosubmit>
        {(props.any === undefined
          ? props.options
          : [{ value: '', label: props.any }, ...props.options]
        ).map((option) => (
          <option value={option.value} selected={props.value === option.value} safe>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  )
}

/**
 * The end of a filter bar: its Filter button and, with `hintClass`, the hint that `/` focuses
 * the search box (in an element of that class).
 */
export function FilterSubmit(props: { hintClass?: string }): JSX.Element {
  return (
    <>
      <button class="btn" type="submit">
        Filter
      </button>
      {props.hintClass === undefined ? (
        ''
      ) : (
        <span class={props.hintClass}>
          Press <kbd>/</kbd> to search
        </span>
      )}
    </>
  )
}

/** Tabs as links (each tab is a URL, so the back button and shared links work). */
export function Tabs(props: {
  label: string
  tabs: readonly { href: string; label: string; active: boolean }[]
}): JSX.Element {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map((tab) => (
        <a href={tab.href} aria-current={tab.active ? 'page' : undefined} safe>
          {tab.label}
        </a>
      ))}
    </nav>
  )
}

/** The search box of a list page; `/` focuses it. */
export function SearchBox(props: {
  name?: string
  value: string
  label: string
  placeholder: string
}): JSX.Element {
  return (
    <div class="field">
      <label for="ui-search" safe>
        {props.label}
      </label>
      <input
        id="ui-search"
        class="search"
        type="search"
        name={props.name ?? 'q'}
        value={props.value}
        placeholder={props.placeholder}
        data-search
        autocomplete="off"
        aria-keyshortcuts="/"
      />
    </div>
  )
}

/** A column of a {@link DataTable}: its heading, hidden on phones or right-aligned if asked. */
export interface Column {
  label: string
  hideNarrow?: boolean
  numeric?: boolean
}

/** The column headings of a table (of {@link DataTable}, or of a table that builds its own frame). */
export function TableHead(props: { columns: readonly (string | Column)[] }): JSX.Element {
  return (
    <thead>
      <tr>
        {props.columns.map((column) => {
          const { label, hideNarrow, numeric } =
            typeof column === 'string' ? { label: column } : column
          const classes = [hideNarrow === true ? 'hide-narrow' : '', numeric === true ? 'num' : '']
            .filter((name) => name !== '')
            .join(' ')
          return (
            <th scope="col" class={classes === '' ? undefined : classes} safe>
              {label}
            </th>
          )
        })}
      </tr>
    </thead>
  )
}

/**
 * A dense table in its scrolling frame, with a caption for screen readers and column
 * headings; `empty` (a designed empty state) replaces the table when given.
 */
export function DataTable(props: {
  caption: string
  columns: readonly (string | Column)[]
  empty?: JSX.Element | false
  children?: JSX.Element | JSX.Element[]
}): JSX.Element {
  // Children are JSX elements, escaped where they were built.
  const safeChildren = props.children
  const safeEmpty = props.empty
  if (safeEmpty !== undefined && safeEmpty !== false)
    return <div class="table-wrap">{safeEmpty}</div>
  // The frame scrolls on a narrow screen: focusable and named, so a keyboard can scroll it.
  return (
    <div class="table-wrap" tabindex="0" role="region" aria-label={props.caption}>
      <table>
        <caption class="visually-hidden" safe>
          {props.caption}
        </caption>
        <TableHead columns={props.columns} />
        <tbody>{safeChildren}</tbody>
      </table>
    </div>
  )
}

/**
 * A paginated list that follows the stream: its table (or `empty` when it has no rows), the
 * error of a failed load above it, and the pager. On the first page a stream `event` reloads
 * it from `refreshUrl` and highlights what is new; later pages stay still, or rows would move
 * under the reader.
 */
export function LiveList<T>(props: {
  /** The element's id, which the live refresh swaps. */
  id: string
  /** The stream event type that reloads it, or several separated by spaces. */
  event: string
  /** The page shown (1-based). */
  page: number
  refreshUrl: string
  error: string | undefined
  caption: string
  columns: readonly (string | Column)[]
  list: { items: readonly T[]; page: number; total: number } | null
  empty: JSX.Element
  perPage: number
  href: (page: number) => string
  row: (item: T) => JSX.Element
}): JSX.Element {
  const { list } = props
  // Rows are JSX elements, escaped where they were built.
  const safeRows = (list?.items ?? []).map(props.row)
  return (
    <div
      id={props.id}
      data-live={props.page === 1 ? props.event : undefined}
      data-live-url={props.refreshUrl}
      data-live-highlight
    >
      <FormError message={props.error} />
      <DataTable
        caption={props.caption}
        columns={props.columns}
        empty={(list === null || list.items.length === 0) && props.empty}
      >
        {safeRows}
      </DataTable>
      <ListPager list={list} perPage={props.perPage} href={props.href} />
    </div>
  )
}
