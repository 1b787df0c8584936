/**
 * Views of the Flags pages: the list (search, status filter, one-click toggle per row) and a
 * flag's detail with five tabs — Overview, Targeting (targets, rules with clauses, segments,
 * rollout weights), Variations, Settings (prerequisites, tags, delete), History (versions with
 * rollback, scheduled changes; see flag-history-view.tsx). Each editing tab's form edits
 * its part of the flag as a JSON merge patch; the API's validation message sits next to the
 * field it names.
 */
import {
  FLAG_STATUSES,
  FLAG_TYPES,
  ROLLOUT_TOTAL,
  type Flag,
  type RolloutEntry,
} from '../../flags/model.js'
import {
  FilterSelect,
  FilterSubmit,
  Badge,
  DataTable,
  Empty,
  Field,
  FormActions,
  FormError,
  SearchBox,
  Tabs,
  Time,
  TimeCell,
  invalid,
  type Tone,
  PageHead,
  TableHead,
} from '../../ui/index.js'
import { RolloutFields, RuleBuilder, ServeSelect } from './flag-rule-builder.js'
import {
  readRules,
  readWeights,
  rulesDraft,
  ROLLOUT,
  weightsDraft,
  type RuleDraft,
} from './flag-rule-drafts.js'
import { binder, raw, type FormBody, type FormErrors } from './forms.js'
import { FlagHistoryTab, type FlagHistoryData } from './flag-history-view.js'
import { domId, ReadOnly, type Dashboard } from './view.js'

/** The tabs of a flag's page whose form edits the flag (a merge patch each). */
export const FLAG_TABS = ['overview', 'targeting', 'variations', 'settings'] as const
/** One of {@link FLAG_TABS}. */
export type FlagTab = (typeof FLAG_TABS)[number]
/** Every tab of a flag's page: the editing tabs, then History (versions and scheduled changes). */
export const FLAG_VIEW_TABS = [...FLAG_TABS, 'history'] as const
/** One of {@link FLAG_VIEW_TABS}. */
export type FlagViewTab = (typeof FLAG_VIEW_TABS)[number]

const TAB_LABEL: Record<FlagViewTab, string> = {
  overview: 'Overview',
  targeting: 'Targeting',
  variations: 'Variations',
  settings: 'Settings',
  history: 'History',
}

/** The list filters: text and a status (`on`, `off`, or a lifecycle status). */
export interface FlagFilters {
  q: string
  status: string
}

/** Status filter values: serving on/off, then the lifecycle statuses. */
export const FLAG_STATUS_FILTERS: readonly string[] = ['on', 'off', ...FLAG_STATUSES]

const STATUS_TONE: Record<Flag['status'], Tone> = {
  ACTIVE: 'ok',
  INACTIVE: 'plain',
  LAUNCHED: 'info',
  DEPRECATED: 'purple',
  ARCHIVED: 'plain',
}

/** True when a flag is shown under the filters. */
export function flagVisible(flag: Flag, filters: FlagFilters): boolean {
  if (filters.status === 'on' && !flag.enabled) return false
  if (filters.status === 'off' && flag.enabled) return false
  if (
    filters.status !== '' &&
    filters.status !== 'on' &&
    filters.status !== 'off' &&
    flag.status !== filters.status
  )
    return false
  for (const word of filters.q.toLowerCase().split(/\s+/)) {
    if (word === '') continue
    if (word.startsWith('tag:')) {
      if (!flag.tags.some((tag) => tag.toLowerCase() === word.slice(4))) return false
      continue
    }
    const haystack =
      `${flag.key} ${flag.name} ${flag.description} ${flag.tags.join(' ')}`.toLowerCase()
    if (!haystack.includes(word)) return false
  }
  return true
}

/**
 * The one-click kill switch: serving (on) or serving its off variation (off); for a viewer,
 * the same state as a badge.
 */
export function FlagSwitch(props: { dashboard: Dashboard; flag: Flag }): JSX.Element {
  const { dashboard, flag } = props
  if (!dashboard.can('operator'))
    return (
      <Badge
        tone={flag.enabled ? 'ok' : 'plain'}
        label={flag.enabled ? 'ON' : 'OFF'}
        title={flag.enabled ? 'Serving' : `Off: serves ${flag.off_variation}`}
      />
    )
  return (
    <button
      class="btn btn-small switch"
      role="switch"
      aria-checked={flag.enabled ? 'true' : 'false'}
      aria-label={`Serving ${flag.key}`}
      hx-post={dashboard.url(`/flags/${encodeURIComponent(flag.key)}/toggle`)}
      hx-vals={JSON.stringify({ enabled: flag.enabled ? '0' : '1' })}
      hx-swap="none"
      hx-confirm={
        flag.enabled
          ? `Turn ${flag.key} off? It serves ${flag.off_variation} to everyone.`
          : undefined
      }
      data-confirm-label={flag.enabled ? `Turn ${flag.key} off` : undefined}
    >
      {flag.enabled ? 'ON' : 'OFF'}
    </button>
  )
}

/** A rollout's share in words: `25 % on` per variation other than the off one, `·`-joined. */
function rolloutSummary(flag: Flag, entries: readonly RolloutEntry[]): string {
  const shown = entries.filter(
    (entry) => entry.weight > 0 && (entry.variation !== flag.off_variation || entries.length === 1),
  )
  const parts = (shown.length === 0 ? entries : shown).map(
    (entry) => `${entry.weight / 1000} % ${entry.variation}`,
  )
  return parts.join(' · ')
}

/**
 * A flag's targeting in one line for the list: how many rules (and targets), then what
 * everyone else gets, e.g. `2 rules · 25 % on` or `no rules · serves off`.
 */
export function targetingSummary(flag: Flag): string {
  const parts: string[] = []
  const rules = flag.rules.length
  parts.push(rules === 0 ? 'no rules' : rules === 1 ? '1 rule' : `${rules} rules`)
  const targets = Object.values(flag.targets).reduce((sum, keys) => sum + keys.length, 0)
  if (targets > 0) parts.push(targets === 1 ? '1 target' : `${targets} targets`)
  parts.push(
    typeof flag.fallthrough === 'string'
      ? `serves ${flag.fallthrough}`
      : rolloutSummary(flag, flag.fallthrough),
  )
  return parts.join(' · ')
}

/** The row of one flag in the list (hidden but live when the filters leave it out). */
export function FlagRow(props: { dashboard: Dashboard; flag: Flag; filters: FlagFilters }) {
  const { dashboard, flag, filters } = props
  const live = {
    id: domId('flag', flag.key),
    'data-live': 'flag',
    'data-live-key': flag.key,
    'data-live-url': dashboard.url('/flags/row', { key: flag.key, ...filters }),
  }
  if (!flagVisible(flag, filters)) return <tr {...live} hidden></tr>
  return (
    <tr {...live}>
      <td class="key">
        <a href={dashboard.url(`/flags/${encodeURIComponent(flag.key)}`)} safe>
          {flag.key}
        </a>
      </td>
      <td safe>{flag.name}</td>
      <td class="hide-narrow">{flag.type}</td>
      <td class="summary" safe>
        {targetingSummary(flag)}
      </td>
      <td>
        <Badge tone={STATUS_TONE[flag.status]} label={flag.status} />
      </td>
      <td>
        <FlagSwitch dashboard={dashboard} flag={flag} />
      </td>
      <td class="hide-narrow mono" safe>
        {flag.tags.join(', ')}
      </td>
      <TimeCell at={flag.updated_at} hideNarrow />
    </tr>
  )
}

/** The flag table (the fallback section for flags the page does not show yet). */
export function FlagTable(props: { dashboard: Dashboard; flags: Flag[]; filters: FlagFilters }) {
  const { dashboard, flags, filters } = props
  const visible = flags.filter((flag) => flagVisible(flag, filters)).length
  return (
    <div
      id="flag-table"
      data-live-fallback="flag"
      data-live-url={dashboard.url('/flags/table', { ...filters })}
      data-live-highlight
    >
      {visible === 0 ? (
        <div class="table-wrap">
          <Empty title={flags.length === 0 ? 'No flags yet.' : 'No flag matches these filters.'}>
            {dashboard.can('operator') ? (
              <p>
                <a href={dashboard.url('/flags/new')} data-action="new-flag">
                  Create a flag
                </a>
              </p>
            ) : (
              ''
            )}
          </Empty>
        </div>
      ) : (
        ''
      )}
      <div
        class="table-wrap"
        hidden={visible === 0}
        tabindex="0"
        role="region"
        aria-label="Feature flags (scrolls sideways)"
      >
        <table class="pinned">
          <caption class="visually-hidden">Feature flags</caption>
          <TableHead
            columns={[
              'Key',
              'Name',
              { label: 'Type', hideNarrow: true },
              'Targeting',
              'Status',
              'Serving',
              { label: 'Tags', hideNarrow: true },
              { label: 'Updated', hideNarrow: true },
            ]}
          />
          <tbody>
            {flags.map((flag) => (
              <FlagRow dashboard={dashboard} flag={flag} filters={filters} />
            ))}
          </tbody>
        </table>
      </div>
    </div>
  )
}

/** The list page's content. */
export function FlagList(props: { dashboard: Dashboard; flags: Flag[]; filters: FlagFilters }) {
  const { dashboard, filters } = props
  return (
    <>
      <PageHead title="Flags">
        {dashboard.can('operator') ? (
          <a class="btn btn-primary" href={dashboard.url('/flags/new')} data-action="new-flag">
            New flag
          </a>
        ) : (
          ''
        )}
      </PageHead>
      <form class="filters" method="get" action={dashboard.url('/flags')} role="search">
        <SearchBox value={filters.q} label="Search flags" placeholder="key, name, tag:checkout" />
        <FilterSelect
          id="flag-status"
          name="status"
          label="Status"
          value={filters.status}
          any="Any"
          options={FLAG_STATUS_FILTERS.map((status) => ({
            value: status,
            label:
              status === 'on' ? 'Serving (on)' : status === 'off' ? 'Off (kill switch)' : status,
          }))}
        />
        <FilterSubmit />
      </form>
      <FlagTable {...props} />
    </>
  )
}

/** Renders a JSON value compactly. */
export function jsonText(value: unknown): string {
  // JSON.stringify answers undefined for undefined and functions, whatever its typing says.
  const text = JSON.stringify(value) as string | undefined
  return text ?? 'null'
}

function Rollout(props: { entries: readonly RolloutEntry[] }): JSX.Element {
  return (
    <ul class="plain">
      {props.entries.map((entry) => (
        <li>
          <meter
            min="0"
            max={ROLLOUT_TOTAL}
            value={entry.weight}
            aria-label={`${entry.variation} weight`}
          ></meter>{' '}
          <span class="mono" safe>
            {entry.variation}
          </span>{' '}
          <span safe>{(entry.weight / 1000).toFixed(entry.weight % 1000 === 0 ? 0 : 1)} %</span>
        </li>
      ))}
    </ul>
  )
}

function Serve(props: { variation: string | null; rollout: readonly RolloutEntry[] | null }) {
  if (props.rollout !== null) return <Rollout entries={props.rollout} />
  return (
    <span>
      serve{' '}
      <strong class="mono" safe>
        {props.variation ?? '—'}
      </strong>
    </span>
  )
}

/** Rollout entries as form lines `variation = 25%`. */
export function rolloutLines(entries: readonly RolloutEntry[]): string {
  return entries.map((entry) => `${entry.variation} = ${entry.weight / 1000}%`).join('\n')
}

function TextArea(props: {
  id: string
  name: string
  label: string
  value: string
  error: string | undefined
  hint?: string
  rows?: number
}): JSX.Element {
  return (
    <Field label={props.label} for={props.id} error={props.error} hint={props.hint}>
      <textarea
        id={props.id}
        name={props.name}
        rows={String(props.rows ?? 4)}
        {...invalid(props.id, props.error)}
        safe
      >
        {props.value}
      </textarea>
    </Field>
  )
}

function TextInput(props: {
  id: string
  name: string
  label: string
  value: string
  error: string | undefined
  hint?: string
}): JSX.Element {
  return (
    <Field label={props.label} for={props.id} error={props.error} hint={props.hint}>
      <input
        id={props.id}
        name={props.name}
        value={props.value}
        {...invalid(props.id, props.error)}
      />
    </Field>
  )
}

/** The fields each tab's form edits. */
export const TAB_FIELDS: Record<FlagTab, readonly string[]> = {
  overview: ['name', 'description', 'status', 'maintainer', 'temporary'],
  targeting: ['targets', 'fallthrough'],
  variations: ['variations', 'off_variation'],
  settings: ['prerequisites', 'tags', 'metadata'],
}

function TabForm(props: {
  dashboard: Dashboard
  flag: Flag
  tab: FlagTab
  children: JSX.Element | JSX.Element[]
  errors: FormErrors
}): JSX.Element {
  const { dashboard, flag, tab } = props
  const safeChildren = props.children
  if (!dashboard.can('operator')) return <ReadOnly>{safeChildren}</ReadOnly>
  return (
    <form
      id="flag-form"
      hx-post={dashboard.url(`/flags/${encodeURIComponent(flag.key)}/${tab}`)}
      hx-target="#flag-view"
      hx-swap="outerHTML"
      data-keep
    >
      <FormError message={props.errors.form} />
      {safeChildren}
      <FormActions submit={`Save ${TAB_LABEL[tab].toLowerCase()}`} />
    </form>
  )
}

function OverviewTab(props: {
  dashboard: Dashboard
  flag: Flag
  form: FormBody | null
  errors: FormErrors
}) {
  const { flag, form, errors } = props
  const field = binder(form, errors)
  const value = (name: string, fallback: string) => (form === null ? fallback : raw(form, name))
  const error = (name: string) => errors.fields.get(name)
  const status = value('status', flag.status)
  return (
    <>
      <dl class="props">
        <dt>Type</dt>
        <dd>{flag.type}</dd>
        <dt>When off</dt>
        <dd>
          serve{' '}
          <strong class="mono" safe>
            {flag.off_variation}
          </strong>
        </dd>
        <dt>Otherwise</dt>
        <dd>
          {typeof flag.fallthrough === 'string' ? (
            <Serve variation={flag.fallthrough} rollout={null} />
          ) : (
            <Serve variation={null} rollout={flag.fallthrough} />
          )}
        </dd>
        <dt>Rules</dt>
        <dd>{flag.rules.length}</dd>
        <dt>Metadata</dt>
        <dd>
          {Object.keys(flag.metadata).length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <ul class="metadata">
              {Object.entries(flag.metadata).map(([key, value]) => (
                <li class="mono" safe>
                  {`${key} = ${JSON.stringify(value)}`}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Created</dt>
        <dd>
          <Time at={flag.created_at} /> <span safe>{`by ${flag.created_by}`}</span>
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time at={flag.updated_at} />
        </dd>
      </dl>
      <TabForm {...props} tab="overview">
        <div class="form-grid">
          <TextInput id="f-name" label="Name" {...field('name', flag.name)} />
          <Field label="Status" for="f-status" error={error('status')}>
            <select id="f-status" name="status" {...invalid('f-status', error('status'))}>
              {FLAG_STATUSES.map((option) => (
                <option value={option} selected={status === option}>
                  {option}
                </option>
              ))}
            </select>
          </Field>
          <TextInput
            id="f-maintainer"
            label="Maintainer"
            {...field('maintainer', flag.maintainer ?? '')}
            hint="Empty: none."
          />
        </div>
        <TextArea
          id="f-description"
          label="Description"
          {...field('description', flag.description)}
          rows={2}
        />
        <div class="field field-check">
          <input
            id="f-temporary"
            type="checkbox"
            name="temporary"
            value="1"
            checked={form === null ? flag.temporary : raw(form, 'temporary') !== ''}
          />
          <label for="f-temporary">Temporary (remove once launched)</label>
        </div>
      </TabForm>
    </>
  )
}

function clauseText(clause: Flag['rules'][number]['clauses'][number]): string {
  return `${clause.negate ? 'NOT ' : ''}${clause.attribute} ${clause.operator} ${clause.values.map((v) => jsonText(v)).join(', ')}`
}

/** The rule rows to show: what was typed after a refused save, else the flag's rules. */
function targetingDrafts(flag: Flag, form: FormBody | null): RuleDraft[] {
  if (form === null) return rulesDraft(flag)
  try {
    return readRules(form, flag)
  } catch {
    // A damaged row count: show the stored rules; the form's message says what went wrong.
    return rulesDraft(flag)
  }
}

function TargetingTab(props: {
  dashboard: Dashboard
  flag: Flag
  form: FormBody | null
  errors: FormErrors
}) {
  const { dashboard, flag, form, errors } = props
  const field = binder(form, errors)
  const segments = new Set<string>()
  for (const rule of flag.rules)
    for (const clause of rule.clauses)
      if (clause.operator === 'in_segment' || clause.operator === 'not_in_segment')
        for (const value of clause.values) if (typeof value === 'string') segments.add(value)
  const targetLines = Object.entries(flag.targets)
    .map(([variation, keys]) => `${variation} = ${keys.join(', ')}`)
    .join('\n')
  const drafts = targetingDrafts(flag, form)
  const fallthroughServe =
    form !== null
      ? raw(form, 'fallthrough')
      : typeof flag.fallthrough === 'string'
        ? flag.fallthrough
        : ROLLOUT
  const fallthroughWeights =
    form !== null
      ? readWeights(form, 'fallthrough')
      : weightsDraft(flag, typeof flag.fallthrough === 'string' ? null : flag.fallthrough)
  return (
    <>
      <h3>Rules</h3>
      {flag.rules.length === 0 ? (
        <p class="muted">No rules: every context that no target names gets the default below.</p>
      ) : (
        <ol>
          {flag.rules.map((rule) => (
            <li>
              {rule.description === '' ? '' : <strong safe>{rule.description}</strong>}
              <ul>
                {rule.clauses.map((clause) => (
                  <li class="mono" safe>
                    {clauseText(clause)}
                  </li>
                ))}
              </ul>
              <Serve variation={rule.variation} rollout={rule.rollout} />
            </li>
          ))}
        </ol>
      )}
      {segments.size === 0 ? (
        ''
      ) : (
        <p>
          Segments used:{' '}
          {[...segments].map((key) => (
            <>
              <a class="mono" href={dashboard.url(`/segments/${encodeURIComponent(key)}`)} safe>
                {key}
              </a>{' '}
            </>
          ))}
        </p>
      )}
      <TabForm {...props} tab="targeting">
        <TextArea
          id="f-targets"
          label="Individual targets"
          {...field('targets', targetLines)}
          hint="One line per variation: on = ada, grace"
          rows={3}
        />
        <h4>Rules, in order (the first that matches serves)</h4>
        <RuleBuilder dashboard={dashboard} flag={flag} rules={drafts} errors={errors} />
        <h4>Default (fallthrough)</h4>
        <ServeSelect
          id="f-fallthrough"
          name="fallthrough"
          label="Everyone else gets"
          flag={flag}
          value={fallthroughServe}
          rolloutId="fallthrough-rollout"
        />
        <RolloutFields
          prefix="fallthrough"
          id="fallthrough-rollout"
          weights={fallthroughWeights}
          hidden={fallthroughServe !== ROLLOUT}
          label="Default rollout"
        />
        <p
          class="error"
          id="fallthrough-error"
          role="alert"
          hidden={errors.fields.get('fallthrough') === undefined}
          safe
        >
          {errors.fields.get('fallthrough') ?? ''}
        </p>
      </TabForm>
    </>
  )
}

function VariationsTab(props: {
  dashboard: Dashboard
  flag: Flag
  form: FormBody | null
  errors: FormErrors
}) {
  const { flag, form, errors } = props
  const field = binder(form, errors)
  return (
    <>
      <DataTable caption="Variations" columns={['Name', 'Value', 'Description']}>
        {flag.variations.map((variation) => (
          <tr>
            <td class="mono">
              <span safe>{variation.name}</span>
              {variation.name === flag.off_variation ? (
                <>
                  {' '}
                  <Badge tone="plain" label="off variation" />
                </>
              ) : (
                ''
              )}
            </td>
            <td class="mono" safe>
              {jsonText(variation.value)}
            </td>
            <td safe>{variation.description}</td>
          </tr>
        ))}
      </DataTable>
      <TabForm {...props} tab="variations">
        <TextArea
          id="f-variations"
          label="Variations (JSON)"
          {...field('variations', JSON.stringify(flag.variations, null, 2))}
          hint={`A list of {"name", "value", "description"}; values of type ${flag.type}.`}
          rows={8}
        />
        <TextInput
          id="f-off"
          label="Off variation"
          {...field('off_variation', flag.off_variation)}
          hint="Served while the flag is off."
        />
      </TabForm>
    </>
  )
}

function SettingsTab(props: {
  dashboard: Dashboard
  flag: Flag
  form: FormBody | null
  errors: FormErrors
}) {
  const { dashboard, flag, form, errors } = props
  const field = binder(form, errors)
  return (
    <>
      <TabForm {...props} tab="settings">
        <TextArea
          id="f-prerequisites"
          label="Prerequisites"
          {...field(
            'prerequisites',
            flag.prerequisites.map((p) => `${p.flag_key} = ${p.variation}`).join('\n'),
          )}
          hint="One per line: other-flag = variation it must serve."
          rows={3}
        />
        <TextInput
          id="f-tags"
          label="Tags"
          {...field('tags', flag.tags.join(', '))}
          hint="Comma-separated."
        />
        <TextArea
          id="f-metadata"
          label="Metadata"
          {...field(
            'metadata',
            Object.keys(flag.metadata).length === 0 ? '' : JSON.stringify(flag.metadata, null, 2),
          )}
          hint='A JSON object of strings, numbers and booleans, e.g. {"owner": "checkout-team", "version": 2}; every evaluation returns it. Empty: none.'
          rows={4}
        />
      </TabForm>
      {dashboard.can('operator') ? (
        <section class="panel" aria-labelledby="danger-title">
          <h3 id="danger-title">Delete this flag</h3>
          <p class="muted">Evaluations then return the caller's default value.</p>
          <button
            class="btn btn-danger"
            hx-post={dashboard.url(`/flags/${encodeURIComponent(flag.key)}/delete`)}
            hx-swap="none"
            hx-confirm={`Delete flag ${flag.key}? This cannot be undone.`}
          >
            <span safe>{`Delete ${flag.key}`}</span>
          </button>
        </section>
      ) : (
        ''
      )}
    </>
  )
}

/**
 * A flag's page content: header with the switch, tabs, the active tab (one live section). The
 * History tab needs `history` (its versions and schedule form); the others take `form` and
 * `errors` of their own form.
 */
export function FlagView(
  props:
    | { dashboard: Dashboard; flag: Flag; tab: FlagTab; form: FormBody | null; errors: FormErrors }
    | { dashboard: Dashboard; flag: Flag; tab: 'history'; history: FlagHistoryData },
): JSX.Element {
  const { dashboard, flag, tab } = props
  const base = `/flags/${encodeURIComponent(flag.key)}`
  const panels = {
    overview: OverviewTab,
    targeting: TargetingTab,
    variations: VariationsTab,
    settings: SettingsTab,
  }
  const panel =
    props.tab === 'history' ? (
      <FlagHistoryTab dashboard={dashboard} flag={flag} history={props.history} />
    ) : (
      panels[props.tab](props)
    )
  return (
    <div
      id="flag-view"
      data-live="flag"
      data-live-key={flag.key}
      data-live-url={dashboard.url(`${base}/view`, { tab })}
    >
      <div class="page-head">
        <div>
          <h1 safe>{flag.name}</h1>
          <span class="key" safe>
            {flag.key}
          </span>{' '}
          <Badge tone={STATUS_TONE[flag.status]} label={flag.status} />
        </div>
        <div class="actions">
          <FlagSwitch dashboard={dashboard} flag={flag} />
        </div>
      </div>
      <p class="stale" data-live-stale hidden>
        This flag changed while you were editing. Save to overwrite, or{' '}
        <a href={dashboard.url(base, { tab })}>reload</a> to see the change.
      </p>
      <Tabs
        label="Flag sections"
        tabs={FLAG_VIEW_TABS.map((id) => ({
          href: dashboard.url(base, id === 'overview' ? {} : { tab: id }),
          label: TAB_LABEL[id],
          active: id === tab,
        }))}
      />
      <div class="panel">{panel}</div>
    </div>
  )
}

/** The create form's fields. */
export const CREATE_FIELDS = [
  'key',
  'name',
  'type',
  'description',
  'variations',
  'off_variation',
  'fallthrough',
  'enabled',
]

/** Default variations by type, as form lines. */
const DEFAULT_VARIATIONS: Record<string, string> = {
  boolean: 'on = true\noff = false',
  string: 'a = "a"\nb = "b"',
  integer: 'low = 1\nhigh = 10',
  float: 'low = 0.1\nhigh = 0.9',
  json: 'small = {"size": 1}\nlarge = {"size": 10}',
}

/** The create form. */
export function FlagCreateForm(props: {
  dashboard: Dashboard
  form: FormBody | null
  errors: FormErrors
}) {
  const { dashboard, form, errors } = props
  const field = binder(form, errors)
  const value = (name: string, fallback: string) => (form === null ? fallback : raw(form, name))
  const error = (name: string) => errors.fields.get(name)
  const type = value('type', 'boolean')
  return (
    <form
      id="flag-create"
      class="panel"
      hx-post={dashboard.url('/flags')}
      hx-target="this"
      hx-swap="outerHTML"
      data-keep
    >
      <FormError message={errors.form} />
      <div class="form-grid">
        <TextInput
          id="c-key"
          label="Key"
          {...field('key', '')}
          hint="Letters, digits, . _ - (used in code)."
        />
        <TextInput id="c-name" label="Name" {...field('name', '')} />
        <Field label="Type" for="c-type" error={error('type')}>
          <select id="c-type" name="type">
            {FLAG_TYPES.map((option) => (
              <option value={option} selected={type === option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <TextArea id="c-description" label="Description" {...field('description', '')} rows={2} />
      <TextArea
        id="c-variations"
        label="Variations"
        {...field('variations', DEFAULT_VARIATIONS[type] ?? '')}
        hint={'One per line: name = JSON value (true, 3, "text", {…}).'}
        rows={4}
      />
      <div class="form-grid">
        <TextInput
          id="c-off"
          label="Off variation"
          {...field('off_variation', 'off')}
          hint="Served while the flag is off."
        />
        <TextInput
          id="c-fallthrough"
          label="Default variation"
          {...field('fallthrough', 'on')}
          hint="Served when no rule matches."
        />
      </div>
      <div class="field field-check">
        <input
          id="c-enabled"
          type="checkbox"
          name="enabled"
          value="1"
          checked={form !== null && raw(form, 'enabled') !== ''}
          aria-describedby="c-enabled-hint"
        />
        <label for="c-enabled">Turn it on now</label>
        <span class="hint" id="c-enabled-hint">
          Unchecked, the flag starts off and serves its off variation to everyone until you turn it
          on.
        </span>
      </div>
      <FormActions
        submit="Create flag"
        cancel={
          <a class="btn" href={dashboard.url('/flags')}>
            Cancel
          </a>
        }
      />
    </form>
  )
}
