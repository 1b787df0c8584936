/**
 * The Rate limits page's views: the global and per-service cards, the route policy table, the
 * Unprotected Routes section, and the policy forms (the four fields of a policy — limit,
 * algorithm, key strategy, burst — plus exempt routes on a scope policy).
 */
import type { RouteState } from '../../core/route-state.js'
import { ALGORITHMS } from '../../rate-limit/algorithms.js'
import { KEY_STRATEGIES } from '../../rate-limit/keys.js'
import type { RateLimitPolicy, ScopeRateLimitPolicy } from '../../rate-limit/policy.js'
import {
  Badge,
  DataTable,
  DialogContent,
  Empty,
  Field,
  FormActions,
  FormError,
  invalid,
} from '../../ui/index.js'
import { raw, type FormBody, type FormErrors } from './forms.js'
import { domId, type Dashboard } from './view.js'

/** Everything the page shows. */
export interface RateLimitsData {
  service: string | null
  global: ScopeRateLimitPolicy | null
  services: { name: string; policy: ScopeRateLimitPolicy | null }[]
  policies: RateLimitPolicy[]
  unprotected: RouteState[]
}

/** The fields of the policy forms. */
export const POLICY_FIELDS = ['limit', 'algorithm', 'key_strategy', 'burst', 'exempt_routes']

function Select(props: {
  id: string
  name: string
  value: string
  options: readonly string[]
  error: string | undefined
}): JSX.Element {
  return (
    <select id={props.id} name={props.name} {...invalid(props.id, props.error)}>
      <option value="" selected={props.value === ''}>
        Default
      </option>
      {props.options.map((option) => (
        <option value={option} selected={props.value === option} safe>
          {option}
        </option>
      ))}
    </select>
  )
}

/**
 * The policy form: a route's (`route` set) or a scope's (global when `service` is null).
 * `form` holds what was typed, else the current policy's values.
 */
export function PolicyForm(props: {
  dashboard: Dashboard
  target: { route: string; service: string } | { scope: string | null }
  current: RateLimitPolicy | ScopeRateLimitPolicy | null
  form: FormBody | null
  errors: FormErrors
}): JSX.Element {
  const { dashboard, target, current, form, errors } = props
  const isRoute = 'route' in target
  const value = (name: string, fallback: string) => (form === null ? fallback : raw(form, name))
  const error = (name: string) => errors.fields.get(name)
  const title = isRoute
    ? `Rate limit of ${target.route}`
    : target.scope === null
      ? 'Global rate limit'
      : `Rate limit of service ${target.scope}`
  const keys = isRoute
    ? KEY_STRATEGIES.filter((k) => k !== 'custom')
    : KEY_STRATEGIES.filter((k) => k !== 'custom')
  return (
    <form
      id="policy-form"
      hx-post={dashboard.url(isRoute ? '/rate-limits/route' : '/rate-limits/scope/set')}
      hx-target="this"
      hx-swap="outerHTML"
      data-keep
    >
      <DialogContent title={title}>
        <FormError message={errors.form} />
        {isRoute ? (
          <>
            <input type="hidden" name="route" value={target.route} />
            <input type="hidden" name="service" value={target.service} />
          </>
        ) : target.scope === null ? (
          ''
        ) : (
          <input type="hidden" name="service" value={target.scope} />
        )}
        <Field
          label="Limit"
          for="p-limit"
          error={error('limit')}
          hint="e.g. 100/minute, 10/second, 5000/hour"
        >
          <input
            id="p-limit"
            name="limit"
            value={value('limit', current?.limit ?? '')}
            required
            autofocus
            {...invalid('p-limit', error('limit'))}
          />
        </Field>
        <div class="form-grid">
          <Field label="Algorithm" for="p-algorithm" error={error('algorithm')}>
            <Select
              id="p-algorithm"
              name="algorithm"
              value={value('algorithm', current?.algorithm ?? '')}
              options={ALGORITHMS}
              error={error('algorithm')}
            />
          </Field>
          <Field label="Key strategy" for="p-key" error={error('key_strategy')}>
            <Select
              id="p-key"
              name="key_strategy"
              value={value('key_strategy', current?.key_strategy ?? '')}
              options={keys}
              error={error('key_strategy')}
            />
          </Field>
          <Field label="Burst" for="p-burst" error={error('burst')} hint="Extra requests allowed.">
            <input
              id="p-burst"
              name="burst"
              inputmode="numeric"
              value={value('burst', current === null ? '' : String(current.burst))}
              {...invalid('p-burst', error('burst'))}
            />
          </Field>
        </div>
        {isRoute ? (
          ''
        ) : (
          <Field
            label="Exempt routes"
            for="p-exempt"
            error={error('exempt_routes')}
            hint="One per line: GET:/health or /health."
          >
            <textarea
              id="p-exempt"
              name="exempt_routes"
              rows="3"
              {...invalid('p-exempt', error('exempt_routes'))}
              safe
            >
              {value(
                'exempt_routes',
                current !== null && 'exempt_routes' in current
                  ? current.exempt_routes.join('\n')
                  : '',
              )}
            </textarea>
          </Field>
        )}
        <FormActions
          submit={current === null ? 'Add limit' : 'Save limit'}
          cancel={
            <button class="btn" type="button" data-dialog-close>
              Cancel
            </button>
          }
        />
      </DialogContent>
    </form>
  )
}

function ScopeCard(props: {
  dashboard: Dashboard
  scope: string | null
  policy: ScopeRateLimitPolicy | null
}): JSX.Element {
  const { dashboard, scope, policy } = props
  const vals = JSON.stringify(scope === null ? {} : { service: scope })
  const name = scope === null ? 'Global' : scope
  const post = (action: string) => dashboard.url(`/rate-limits/scope/${action}`)
  return (
    <div class="card" id={domId('scope', scope ?? '')}>
      <div class="card-head">
        <h3 class={scope === null ? '' : 'mono'} safe>
          {name}
        </h3>
        {policy === null ? (
          <Badge tone="plain" label="NO LIMIT" />
        ) : policy.enabled ? (
          <Badge tone="ok" label="ENABLED" />
        ) : (
          <Badge tone="warn" label="PAUSED" />
        )}
      </div>
      {policy === null ? (
        <p class="muted">
          {scope === null
            ? 'No limit over every route and caller.'
            : 'No limit over this service’s routes.'}
        </p>
      ) : (
        <dl class="props">
          <dt>Limit</dt>
          <dd class="mono" safe>
            {policy.limit}
          </dd>
          <dt>Algorithm</dt>
          <dd>{policy.algorithm}</dd>
          <dt>Key</dt>
          <dd>{policy.key_strategy}</dd>
          <dt>Burst</dt>
          <dd>{policy.burst}</dd>
          <dt>Exempt</dt>
          <dd class="mono" safe>
            {policy.exempt_routes.length === 0 ? '—' : policy.exempt_routes.join(', ')}
          </dd>
        </dl>
      )}
      {!dashboard.can('operator') ? (
        ''
      ) : (
        <div class="row-actions">
          <button
            class="btn btn-small"
            hx-get={dashboard.url(
              '/rate-limits/scope/form',
              scope === null ? {} : { service: scope },
            )}
            hx-target="#ui-dialog-body"
            data-action="rate-limit-scope"
            aria-label={`${policy === null ? 'Set limit…' : 'Edit…'} ${name} rate limit`}
          >
            {policy === null ? 'Set limit…' : 'Edit…'}
          </button>
          {policy === null ? (
            ''
          ) : (
            <>
              <button
                class="btn btn-small"
                hx-post={post(policy.enabled ? 'pause' : 'resume')}
                hx-vals={vals}
                hx-swap="none"
                aria-label={`${policy.enabled ? 'Pause' : 'Resume'} ${name} rate limit`}
              >
                {policy.enabled ? 'Pause' : 'Resume'}
              </button>
              <button
                class="btn btn-small"
                hx-post={post('reset')}
                hx-vals={vals}
                hx-swap="none"
                hx-confirm={`Reset the counters of the ${name} rate limit? Every caller starts from zero.`}
                aria-label={`Reset ${name} rate limit counters`}
              >
                Reset
              </button>
              <button
                class="btn btn-small btn-danger"
                hx-post={post('delete')}
                hx-vals={vals}
                hx-swap="none"
                hx-confirm={`Delete the ${name} rate limit? Requests are no longer counted against it.`}
                aria-label={`Delete ${name} rate limit`}
              >
                Delete
              </button>
            </>
          )}
        </div>
      )}
    </div>
  )
}

function policyRoute(policy: RateLimitPolicy): string {
  return `${policy.method}:${policy.path}`
}

function Tiers(props: { policy: RateLimitPolicy }): JSX.Element {
  if (props.policy.tiers.length === 0)
    return (
      <span class="mono" safe>
        {props.policy.limit}
      </span>
    )
  return (
    <span class="mono" safe>
      {props.policy.tiers.map((tier) => `${tier.name}: ${tier.limit}`).join(', ')}
    </span>
  )
}

/** The live part of the page: cards, policy table and unprotected routes. */
export function RateLimitsBody(props: { dashboard: Dashboard; data: RateLimitsData }) {
  const { dashboard, data } = props
  const services = data.services.filter((s) => data.service === null || s.name === data.service)
  const actions = dashboard.can('operator')
  return (
    <div
      id="rate-limits"
      data-live="rl_policy global_rl_policy service_rl_policy"
      data-live-url={dashboard.url('/rate-limits/body', { service: data.service })}
    >
      <section aria-labelledby="scopes-title">
        <h2 id="scopes-title">Global and service limits</h2>
        <div class="cards">
          <ScopeCard dashboard={dashboard} scope={null} policy={data.global} />
          {services.map((service) => (
            <ScopeCard dashboard={dashboard} scope={service.name} policy={service.policy} />
          ))}
        </div>
      </section>
      <section aria-labelledby="policies-title">
        <h2 id="policies-title">Route policies</h2>
        <DataTable
          caption="Route rate-limit policies"
          columns={[
            'Route',
            'Limit',
            'Algorithm',
            'Key',
            { label: 'Burst', numeric: true },
            ...(actions ? ['Actions'] : []),
          ]}
          empty={
            data.policies.length === 0 && (
              <Empty title="No route has a rate limit.">
                <p>Add one from Unprotected Routes below, or with a decorator in the app.</p>
              </Empty>
            )
          }
        >
          {data.policies.map((policy) => {
            const route = policyRoute(policy)
            const vals = JSON.stringify({ route, service: policy.service })
            return (
              <tr id={domId('policy', `${policy.service} ${route}`)}>
                <td class="key">
                  <span safe>{route}</span>
                  <div class="muted" safe>
                    {policy.service}
                  </div>
                </td>
                <td>
                  <Tiers policy={policy} />
                </td>
                <td>{policy.algorithm}</td>
                <td>{policy.key_strategy}</td>
                <td class="num">{policy.burst}</td>
                {!actions ? (
                  ''
                ) : (
                  <td>
                    <div class="row-actions">
                      <button
                        class="btn btn-small"
                        hx-get={dashboard.url('/rate-limits/route/form', {
                          route,
                          service: policy.service,
                        })}
                        hx-target="#ui-dialog-body"
                        data-action="rate-limit-route"
                        aria-label={`Edit… rate limit of ${route}`}
                      >
                        Edit…
                      </button>
                      <button
                        class="btn btn-small"
                        hx-post={dashboard.url('/rate-limits/route/reset')}
                        hx-vals={vals}
                        hx-swap="none"
                        hx-confirm={`Reset the counters of ${route}?`}
                        aria-label={`Reset counters of ${route}`}
                      >
                        Reset
                      </button>
                      <button
                        class="btn btn-small btn-danger"
                        hx-post={dashboard.url('/rate-limits/route/delete')}
                        hx-vals={vals}
                        hx-swap="none"
                        hx-confirm={`Delete the runtime rate limit of ${route}? A limit declared in code stays.`}
                        aria-label={`Delete rate limit of ${route}`}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                )}
              </tr>
            )
          })}
        </DataTable>
      </section>
      <section aria-labelledby="unprotected-title">
        <h2 id="unprotected-title">Unprotected Routes</h2>
        <DataTable
          caption="Routes without a rate limit"
          columns={['Route', 'Service', ...(actions ? ['Action'] : [])]}
          empty={data.unprotected.length === 0 && <Empty title="Every route has a rate limit." />}
        >
          {data.unprotected.map((state) => (
            <tr id={domId('open', `${state.service} ${state.route}`)}>
              <td class="key" safe>
                {state.route}
              </td>
              <td class="mono" safe>
                {state.service}
              </td>
              {!actions ? (
                ''
              ) : (
                <td>
                  <button
                    class="btn btn-small"
                    hx-get={dashboard.url('/rate-limits/route/form', {
                      route: state.route,
                      service: state.service,
                    })}
                    hx-target="#ui-dialog-body"
                    data-action="rate-limit-route"
                    aria-label={`Add Limit to ${state.route}`}
                  >
                    Add Limit
                  </button>
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      </section>
    </div>
  )
}
