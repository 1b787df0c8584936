/**
 * The "API tokens" section of the Keys page: the bearer tokens of the admin API (scripts, CI,
 * and the service tokens SDK apps run on). Create one (its value is shown once, in the answer,
 * and never again: only its hash is stored), see every token with its role, service, expiry
 * and last use, revoke one (its open event streams end at once). Only admins manage tokens:
 * others see a note saying so, and the server refuses their requests anyway.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { roleAllows, ROLES } from '../../common/roles.js'
import type { ApiTokenView, IssuedApiToken } from '../auth/api-tokens.js'
import { issueApiToken, revokeApiToken } from '../routes/api-tokens.js'
import {
  DataTable,
  Empty,
  Field,
  FormActions,
  FormError,
  TimeCell,
  invalid,
  sendHtml,
  trigger,
} from '../../ui/index.js'
import { attempt, done } from './answers.js'
import { formErrors, formOf, raw, NO_ERRORS, type FormErrors } from './forms.js'
import { IssuedSecret, RevokeButton } from './credential-parts.js'
import { ADMIN_PAGE, domId, type Dashboard } from './view.js'

const TOKEN_FIELDS = ['name', 'role', 'service', 'expires_at'] as const

/** True when the signed-in user may manage API tokens. */
export function managesTokens(request: FastifyRequest): boolean {
  const role = request.switchyardAdmin?.role
  return role !== undefined && roleAllows(role, 'admin')
}

function TokenTable(props: { dashboard: Dashboard; tokens: readonly ApiTokenView[] }) {
  const { dashboard, tokens } = props
  const now = Date.now()
  return (
    <div id="tokens-table" data-live="tokens" data-live-url={dashboard.url('/api-tokens/table')}>
      <DataTable
        caption="API tokens, oldest first"
        columns={[
          'Name',
          'Role',
          'Service',
          { label: 'Id', hideNarrow: true },
          'Expires',
          'Last used',
          'Actions',
        ]}
        empty={
          tokens.length === 0 && (
            <Empty title="No API tokens.">
              <p>
                Create a service token for each SDK app, and a token for each script or CI job, so
                that each can be revoked on its own.
              </p>
            </Empty>
          )
        }
      >
        {tokens.map((token) => (
          <tr id={domId('token', token.id)}>
            <td safe>{token.name}</td>
            <td>{token.role}</td>
            <td safe>{token.service ?? '—'}</td>
            <td class="mono hide-narrow" safe>
              {token.id}
            </td>
            {token.expires_at === null ? (
              <td>never</td>
            ) : (
              <TimeCell at={token.expires_at} now={now} />
            )}
            {token.last_used_at === null ? (
              <td>never</td>
            ) : (
              <TimeCell at={token.last_used_at} now={now} />
            )}
            <td>
              <RevokeButton
                dashboard={dashboard}
                path={`/api-tokens/${encodeURIComponent(token.id)}/revoke`}
                name={token.name}
                confirm={`Revoke the API token "${token.name}"? Whatever uses it is refused from now on.`}
              />
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  )
}

/** What the create form shows: the values typed, their errors, and a token just issued. */
interface TokenFormState {
  values: Readonly<Record<(typeof TOKEN_FIELDS)[number], string>>
  errors: FormErrors
  issued: IssuedApiToken | null
}

const EMPTY_VALUES = { name: '', role: 'viewer', service: '', expires_at: '' }

function TokenForm(props: TokenFormState & { dashboard: Dashboard }) {
  const { dashboard, errors, issued, values } = props
  const error = (field: string) => errors.fields.get(field)
  return (
    <form
      id="token-form"
      class="panel"
      method="post"
      action={dashboard.url('/api-tokens')}
      hx-post={dashboard.url('/api-tokens')}
      hx-target="#token-form"
      hx-swap="outerHTML"
    >
      <h3>New API token</h3>
      <FormError message={errors.form} />
      {issued === null ? (
        ''
      ) : (
        <IssuedSecret kind="Token" name={issued.name} secret={issued.token} />
      )}
      <Field
        label="Name"
        for="token-name"
        error={error('name')}
        hint="e.g. orders-app or ci-deploy"
      >
        <input
          id="token-name"
          name="name"
          required
          maxlength="64"
          pattern="[A-Za-z0-9._\-]{1,64}"
          value={values.name}
          {...invalid('token-name', error('name'))}
        />
      </Field>
      <Field
        label="Role"
        for="token-role"
        error={error('role')}
        hint="A service token is always operator"
      >
        <select id="token-role" name="role" {...invalid('token-role', error('role'))}>
          {ROLES.map((role) => (
            <option value={role} selected={values.role === role}>
              {role}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Service (optional)"
        for="token-service"
        error={error('service')}
        hint="Makes it a service token, confined to this service"
      >
        <input
          id="token-service"
          name="service"
          maxlength="63"
          value={values.service}
          {...invalid('token-service', error('service'))}
        />
      </Field>
      <Field
        label="Expires at (optional)"
        for="token-expires"
        error={error('expires_at')}
        hint="ISO 8601, e.g. 2027-01-01T00:00:00Z; empty: never"
      >
        <input
          id="token-expires"
          name="expires_at"
          maxlength="64"
          value={values.expires_at}
          {...invalid('token-expires', error('expires_at'))}
        />
      </Field>
      <FormActions submit="Create token" />
    </form>
  )
}

/** The section as the Keys page shows it to `request`'s user. */
export async function apiTokensSection(
  dashboard: Dashboard,
  request: FastifyRequest,
): Promise<JSX.Element> {
  if (!managesTokens(request))
    return (
      <section aria-labelledby="api-tokens-title">
        <h2 id="api-tokens-title">API tokens</h2>
        <p class="muted">Managing API tokens needs the admin role.</p>
      </section>
    )
  const tokens = await dashboard.admin.apiTokens.list()
  return (
    <section aria-labelledby="api-tokens-title">
      <h2 id="api-tokens-title">API tokens</h2>
      <p class="muted">
        Bearer tokens of the admin API for scripts and CI, with a role; a service token (with a
        service) is what an SDK app runs on and acts on its own service only. Send it as{' '}
        <code>Authorization: Bearer syt_…</code>.
      </p>
      <TokenForm dashboard={dashboard} values={EMPTY_VALUES} errors={NO_ERRORS} issued={null} />
      <TokenTable dashboard={dashboard} tokens={tokens} />
    </section>
  )
}

/** Registers the section's table fragment and its two actions (admins only). */
export function apiTokenActions(app: FastifyInstance, dashboard: Dashboard): void {
  const { apiTokens: tokens, engine } = dashboard.admin
  const sendForm = (reply: FastifyReply, status: number, state: TokenFormState) =>
    sendHtml(reply, <TokenForm dashboard={dashboard} {...state} />, status)

  app.get('/api-tokens/table', ADMIN_PAGE, async (_request, reply) =>
    sendHtml(reply, <TokenTable dashboard={dashboard} tokens={await tokens.list()} />),
  )

  app.post('/api-tokens', ADMIN_PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const values = {
      name: raw(form, 'name').trim(),
      role: raw(form, 'role'),
      service: raw(form, 'service').trim(),
      expires_at: raw(form, 'expires_at').trim(),
    }
    const service = values.service === '' ? undefined : values.service
    return attempt(
      reply,
      async () => {
        const issued = await issueApiToken(
          engine,
          tokens,
          {
            name: values.name,
            // A service token is always operator: the role select does not apply to it.
            ...(service === undefined ? { role: values.role } : { service }),
            ...(values.expires_at === '' ? {} : { expires_at: values.expires_at }),
          },
          dashboard.actor(request),
        )
        trigger(reply, { 'ui-refresh': { type: 'tokens' } })
        return sendForm(reply, 201, { values: EMPTY_VALUES, errors: NO_ERRORS, issued })
      },
      (error) =>
        sendForm(reply, 422, { values, errors: formErrors(error, TOKEN_FIELDS), issued: null }),
    )
  })

  app.post<{ Params: { id: string } }>(
    '/api-tokens/:id/revoke',
    ADMIN_PAGE,
    async (request, reply) =>
      attempt(reply, async () => {
        const token = await revokeApiToken(
          engine,
          tokens,
          request.params.id,
          dashboard.actor(request),
        )
        return done(reply, `API token ${token.name} is revoked.`, { type: 'tokens' })
      }),
  )
}
