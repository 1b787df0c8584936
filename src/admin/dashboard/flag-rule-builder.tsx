/**
 * The targeting editor's controls: rule rows (conditions of attribute / operator / values /
 * negate, what the rule serves, buttons to add, remove and reorder) and the rollout editor
 * (one percentage per variation, the total shown as it is typed). Everything is a plain form
 * control; the buttons post the form to the builder endpoint, which answers the rows again
 * with the change applied, so nothing is lost and no client framework is needed.
 */
import { OPERATORS, type Flag } from '../../flags/model.js'
import { ROLLOUT, type RuleDraft, type WeightsDraft } from './flag-rule-drafts.js'
import type { FormErrors } from './forms.js'
import type { Dashboard } from './view.js'

/** Operators in words, for the select (the value sent is the operator's name). */
const OPERATOR_LABEL: Record<(typeof OPERATORS)[number], string> = {
  is: 'is',
  is_not: 'is not',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  ends_with: 'ends with',
  matches: 'matches (regular expression)',
  not_matches: 'does not match (regular expression)',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  before: 'is before (date)',
  after: 'is after (date)',
  in: 'is one of',
  not_in: 'is none of',
  in_segment: 'is in segment',
  not_in_segment: 'is not in segment',
  semver_eq: 'version =',
  semver_lt: 'version <',
  semver_gt: 'version >',
}

/** The total of a rollout draft in thousandths of a percent (unreadable weights count 0). */
function totalOf(weights: WeightsDraft): number {
  let total = 0
  for (const [, text] of weights) {
    const percent = Number(text.trim().replace(/\s*%$/, '') || '0')
    if (Number.isFinite(percent)) total += Math.round(percent * 1000)
  }
  return total
}

function RowError(props: { id: string; message: string | undefined }): JSX.Element {
  if (props.message === undefined) return <></>
  return (
    <p class="error" id={props.id} role="alert" safe>
      {props.message}
    </p>
  )
}

/**
 * The rollout editor: a percentage per variation under `<prefix>.w` (with the variation in
 * `<prefix>.wv`) and the live total; hidden while the serve choice is not a rollout.
 */
export function RolloutFields(props: {
  prefix: string
  id: string
  weights: WeightsDraft
  hidden: boolean
  label: string
}): JSX.Element {
  const { prefix, id, weights } = props
  const total = totalOf(weights)
  return (
    <fieldset class="rollout" id={id} data-rollout hidden={props.hidden}>
      <legend safe>{props.label}</legend>
      {weights.map(([variation, percent], index) => (
        <div class="rollout-row">
          <input type="hidden" name={`${prefix}.wv`} value={variation} />
          <label for={`${id}-w${index}`} class="mono" safe>
            {variation}
          </label>
          <input
            id={`${id}-w${index}`}
            name={`${prefix}.w`}
            type="number"
            inputmode="decimal"
            min="0"
            max="100"
            step="any"
            value={percent}
            class="weight"
          />
          <span aria-hidden="true">%</span>
        </div>
      ))}
      <p class="rollout-total">
        <output
          data-rollout-sum
          for={weights.map((_, index) => `${id}-w${index}`).join(' ')}
          class={total === 100_000 ? 'ok' : 'off'}
          aria-live="polite"
          safe
        >
          {`Total ${total / 1000} %${total === 100_000 ? '' : ' — must be 100 %'}`}
        </output>
      </p>
    </fieldset>
  )
}

/** A serve choice: one of the flag's variations, or a percentage rollout (reveals the weights). */
export function ServeSelect(props: {
  id: string
  name: string
  label: string
  flag: Flag
  value: string
  rolloutId: string
}): JSX.Element {
  const { flag, value } = props
  const known = flag.variations.some((variation) => variation.name === value)
  return (
    <div class="field">
      <label for={props.id} safe>
        {props.label}
      </label>
      <select id={props.id} name={props.name} data-serve-for={props.rolloutId}>
        {known || value === ROLLOUT || value === '' ? (
          ''
        ) : (
          <option value={value} selected safe>
            {value}
          </option>
        )}
        {flag.variations.map((variation) => (
          <option value={variation.name} selected={variation.name === value} safe>
            {variation.name}
          </option>
        ))}
        <option value={ROLLOUT} selected={value === ROLLOUT}>
          a percentage rollout…
        </option>
      </select>
    </div>
  )
}

/** One builder button: posts the form with an action and swaps the rows. */
function OpButton(props: {
  dashboard: Dashboard
  flag: Flag
  op: string
  label: string
  text: string
  id?: string
  disabled?: boolean
  focus?: boolean
  danger?: boolean
}): JSX.Element {
  // A viewer sees the rows read-only, without the controls that would edit them.
  if (!props.dashboard.can('operator')) return <></>
  return (
    <button
      type="button"
      class={props.danger === true ? 'btn btn-small btn-danger' : 'btn btn-small'}
      id={props.id}
      aria-label={props.label}
      title={props.label}
      hx-post={props.dashboard.url(`/flags/${encodeURIComponent(props.flag.key)}/rules/edit`)}
      hx-vals={JSON.stringify({ op: props.op })}
      hx-include="closest form"
      hx-target="#rule-builder"
      hx-swap="outerHTML"
      disabled={props.disabled === true}
      autofocus={props.focus === true}
      safe
    >
      {props.text}
    </button>
  )
}

function RuleRow(props: {
  dashboard: Dashboard
  flag: Flag
  rule: RuleDraft
  index: number
  count: number
  errors: FormErrors
  focus: boolean
}): JSX.Element {
  const { dashboard, flag, rule, index, count, errors } = props
  const p = `r${index}`
  const n = index + 1
  const error = errors.fields.get(p)
  const common = { dashboard, flag }
  // The focus stays on the control the operator used: the moved rule's button in its new place.
  const focusUp = props.focus && index > 0
  const focusDown = props.focus && index === 0 && count > 1
  return (
    <fieldset
      class={error === undefined ? 'rule-row' : 'rule-row invalid'}
      id={`rule-${index}`}
      {...(error === undefined ? {} : { 'aria-describedby': `${p}-error` })}
    >
      <legend safe>{`Rule ${n}`}</legend>
      <input type="hidden" name={`${p}.id`} value={rule.id} />
      <input type="hidden" name={`${p}.clauses`} value={String(rule.clauses.length)} />
      {rule.track ? <input type="hidden" name={`${p}.track`} value="1" /> : ''}
      <div class="rule-tools">
        <OpButton
          {...common}
          op={`up:${index}`}
          id={`${p}-up`}
          label={`Move rule ${n} up`}
          text="↑ Up"
          disabled={index === 0}
          focus={focusUp}
        />
        <OpButton
          {...common}
          op={`down:${index}`}
          id={`${p}-down`}
          label={`Move rule ${n} down`}
          text="↓ Down"
          disabled={index === count - 1}
          focus={focusDown}
        />
        <OpButton
          {...common}
          op={`remove-rule:${index}`}
          label={`Remove rule ${n}`}
          text="Remove rule"
          danger
          focus={props.focus && count === 1}
        />
      </div>
      <div class="field">
        <label for={`${p}-description`}>Description</label>
        <input id={`${p}-description`} name={`${p}.description`} value={rule.description} />
      </div>
      <ol class="clauses" aria-label={`Conditions of rule ${n} (all must hold)`}>
        {rule.clauses.map((clause, j) => {
          const c = `${p}.c${j}`
          const id = `${p}-c${j}`
          const m = j + 1
          const clauseError = errors.fields.get(c)
          const described = clauseError === undefined ? {} : { 'aria-describedby': `${id}-error` }
          const invalid = clauseError === undefined ? {} : { 'aria-invalid': 'true' }
          return (
            <li class="clause-row">
              <div class="field">
                <label for={`${id}-attribute`} safe>{`Attribute (${m})`}</label>
                <input
                  id={`${id}-attribute`}
                  name={`${c}.attribute`}
                  value={clause.attribute}
                  list="rule-attributes"
                  autocomplete="off"
                  {...invalid}
                  {...described}
                />
              </div>
              <div class="field">
                <label for={`${id}-operator`} safe>{`Operator (${m})`}</label>
                <select id={`${id}-operator`} name={`${c}.operator`} {...described}>
                  {OPERATORS.map((operator) => (
                    <option value={operator} selected={clause.operator === operator} safe>
                      {OPERATOR_LABEL[operator]}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field clause-values">
                <label for={`${id}-values`} safe>{`Values (${m})`}</label>
                <input
                  id={`${id}-values`}
                  name={`${c}.values`}
                  value={clause.values}
                  autocomplete="off"
                  {...invalid}
                  {...described}
                />
              </div>
              <div class="field field-check">
                <input
                  id={`${id}-negate`}
                  type="checkbox"
                  name={`${c}.negate`}
                  value="1"
                  checked={clause.negate}
                />
                <label for={`${id}-negate`} safe>{`Negate (${m})`}</label>
              </div>
              <OpButton
                {...common}
                op={`remove-clause:${index}:${j}`}
                label={`Remove condition ${m} of rule ${n}`}
                text="Remove"
              />
              <RowError id={`${id}-error`} message={clauseError} />
            </li>
          )
        })}
      </ol>
      <p class="hint">
        Values: comma-separated; put text that contains a comma or looks like a number in double
        quotes ("42"). Every condition must hold.
      </p>
      <OpButton
        {...common}
        op={`add-clause:${index}`}
        label={`Add a condition to rule ${n}`}
        text="+ Condition"
      />
      <ServeSelect
        id={`${p}-serve`}
        name={`${p}.serve`}
        label={`Rule ${n} serves`}
        flag={flag}
        value={rule.serve}
        rolloutId={`${p}-rollout`}
      />
      <RolloutFields
        prefix={p}
        id={`${p}-rollout`}
        weights={rule.weights}
        hidden={rule.serve !== ROLLOUT}
        label={`Rule ${n} rollout`}
      />
      <RowError id={`${p}-error`} message={error} />
    </fieldset>
  )
}

/** The rule rows and their buttons (swapped as a whole by the builder endpoint). */
export function RuleBuilder(props: {
  dashboard: Dashboard
  flag: Flag
  rules: RuleDraft[]
  errors: FormErrors
  /** The rule whose button keeps the focus after a builder action. */
  focus?: number | null
}): JSX.Element {
  const { dashboard, flag, rules, errors } = props
  return (
    <div id="rule-builder" class="rule-builder">
      <input type="hidden" name="rules" value={String(rules.length)} />
      <datalist id="rule-attributes">
        {['key', 'kind', 'email', 'ip', 'country', 'app_version'].map((name) => (
          <option value={name}></option>
        ))}
      </datalist>
      {rules.length === 0 ? (
        <p class="muted">No rules: contexts no target names get the default below.</p>
      ) : (
        ''
      )}
      {rules.map((rule, index) => (
        <RuleRow
          dashboard={dashboard}
          flag={flag}
          rule={rule}
          index={index}
          count={rules.length}
          errors={errors}
          focus={props.focus === index}
        />
      ))}
      <RowError id="rules-error" message={errors.fields.get('rules')} />
      <OpButton
        dashboard={dashboard}
        flag={flag}
        op="add-rule"
        label="Add a rule"
        text="+ Add a rule"
        focus={props.focus === null && rules.length === 0}
      />
    </div>
  )
}
