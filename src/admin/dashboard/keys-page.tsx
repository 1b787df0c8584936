/**
 * The Keys page: the read-only evaluation keys that open the OFREP endpoints to services in
 * any language and to browsers. Create one (its value is shown once, in the answer, and never
 * again: only its hash is stored), see every key with its hint, revoke one (its open OFREP
 * streams close at once). Creation and revocation are audited like the API's.
 *
 * Keys are credentials: like the API's key endpoints, the page's table and actions need the
 * `admin` role; an operator or viewer who opens the page sees which role it needs.
 *
 * The page also holds the API tokens of the admin API (api-tokens-section.tsx).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { EvaluationKeyView, IssuedEvaluationKey } from '../auth/evaluation-keys.js'
import { splitFlagPatterns } from '../auth/flag-scope.js'
import { issueEvaluationKey, revokeEvaluationKey } from '../routes/evaluation-keys.js'
import {
  DataTable,
  Empty,
  Field,
  FormActions,
  FormError,
  PageHead,
  TimeCell,
  invalid,
  sendHtml,
  trigger,
} from '../../ui/index.js'
import { attempt, done } from './answers.js'
import { formErrors, formOf, raw, NO_ERRORS, type FormErrors } from './forms.js'
import { ADMIN_PAGE, NeedsRole, PAGE, domId, type Dashboard } from './view.js'
import { apiTokenActions, apiTokensSection } from './api-tokens-section.js'
import { IssuedSecret, RevokeButton } from './credential-parts.js'

const KEY_FIELDS = ['name', 'flags'] as const

function KeyTable(props: { dashboard: Dashboard; keys: readonly EvaluationKeyView[] }) {
  const { dashboard, keys } = props
  const now = Date.now()
  return (
    <div id="keys-table" data-live="keys" data-live-url={dashboard.url('/evaluation-keys/table')}>
      <DataTable
        caption="Evaluation keys, oldest first"
        columns={[
          'Name',
          'Key',
          { label: 'Flags', hideNarrow: true },
          { label: 'Id', hideNarrow: true },
          'Created',
          { label: 'By', hideNarrow: true },
          'Actions',
        ]}
        empty={
          keys.length === 0 && (
            <Empty title="No evaluation keys.">
              <p>
                Create one for each service or browser app that evaluates flags over OFREP, so that
                each can be revoked on its own.
              </p>
            </Empty>
          )
        }
      >
        {keys.map((key) => (
          <tr id={domId('key', key.id)}>
            <td safe>{key.name}</td>
            <td class="mono" safe>
              {key.hint}
            </td>
            <td class="mono hide-narrow" safe>
              {key.flags === null ? 'all' : key.flags.join(', ')}
            </td>
            <td class="mono hide-narrow" safe>
              {key.id}
            </td>
            <TimeCell at={key.created_at} now={now} />
            <td class="hide-narrow" safe>
              {key.created_by}
            </td>
            <td>
              <RevokeButton
                dashboard={dashboard}
                path={`/evaluation-keys/${encodeURIComponent(key.id)}/revoke`}
                name={key.name}
                confirm={`Revoke the key "${key.name}"? Services using it stop evaluating flags.`}
              />
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  )
}

/**
 * What the create form shows: the name and flag patterns typed, their errors, and a key just
 * issued (shown once).
 */
interface CreateFormState {
  name: string
  flags: string
  errors: FormErrors
  issued: IssuedEvaluationKey | null
}

function CreateForm(props: CreateFormState & { dashboard: Dashboard }) {
  const { dashboard, errors, issued } = props
  const error = errors.fields.get('name')
  const flagsError = errors.fields.get('flags')
  return (
    <form
      id="key-form"
      class="panel"
      method="post"
      action={dashboard.url('/evaluation-keys')}
      hx-post={dashboard.url('/evaluation-keys')}
      hx-target="#key-form"
      hx-swap="outerHTML"
    >
      <h2>New key</h2>
      <FormError message={errors.form} />
      {issued === null ? '' : <IssuedSecret kind="Key" name={issued.name} secret={issued.key} />}
      <Field label="Name" for="key-name" error={error} hint="Who uses it, e.g. checkout-web">
        <input
          id="key-name"
          name="name"
          required
          maxlength="100"
          value={props.name}
          {...invalid('key-name', error)}
        />
      </Field>
      <Field
        label="Flags"
        for="key-flags"
        error={flagsError}
        hint="Optional, comma-separated: exact keys, prefixes such as checkout-*, tag:web. Empty: every flag."
      >
        <input
          id="key-flags"
          name="flags"
          class="mono"
          maxlength="20000"
          value={props.flags}
          {...invalid('key-flags', flagsError)}
        />
      </Field>
      <FormActions submit="Create key" />
    </form>
  )
}

/** Registers the Keys page, its table fragment and its two actions. */
export function keysPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { evaluationKeys: keys, engine } = dashboard.admin
  const table = async () => <KeyTable dashboard={dashboard} keys={await keys.list()} />
  const sendForm = (reply: FastifyReply, status: number, state: CreateFormState) =>
    sendHtml(reply, <CreateForm dashboard={dashboard} {...state} />, status)

  app.get('/evaluation-keys', PAGE, async (request, reply) => {
    const view = dashboard.for(request)
    if (!view.can('admin'))
      return sendHtml(
        reply,
        dashboard.page(request, {
          title: 'Evaluation keys',
          active: 'keys',
          children: (
            <>
              <PageHead title="Evaluation keys" />
              <NeedsRole
                dashboard={view}
                role="admin"
                what="Managing evaluation keys and API tokens"
              />
            </>
          ),
        }),
      )
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Evaluation keys',
        active: 'keys',
        children: (
          <>
            <PageHead title="Evaluation keys" />
            <p class="muted">
              Read-only keys for the OFREP endpoints (
              <code safe>{`${dashboard.url('/ofrep/v1/')}…`}</code>): a service in any language, or
              a browser, evaluates flags with one and can change nothing. Send it as{' '}
              <code>Authorization: Bearer syk_…</code>.
            </p>
            <CreateForm dashboard={dashboard} name="" flags="" errors={NO_ERRORS} issued={null} />
            {(await table()) as 'safe'}
            {(await apiTokensSection(dashboard, request)) as 'safe'}
          </>
        ),
      }),
    )
  })

  app.get('/evaluation-keys/table', ADMIN_PAGE, async (_request, reply) =>
    sendHtml(reply, await table()),
  )

  apiTokenActions(app, dashboard)

  app.post('/evaluation-keys', ADMIN_PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const name = raw(form, 'name')
    const flags = raw(form, 'flags')
    const actor = dashboard.actor(request)
    return attempt(
      reply,
      async () => {
        const patterns = splitFlagPatterns(flags)
        const issued = await issueEvaluationKey(engine, keys, name, actor, patterns)
        trigger(reply, { 'ui-refresh': { type: 'keys' } })
        return sendForm(reply, 201, { name: '', flags: '', errors: NO_ERRORS, issued })
      },
      (error) =>
        sendForm(reply, 422, {
          name,
          flags,
          errors: formErrors(error, KEY_FIELDS),
          issued: null,
        }),
    )
  })

  app.post<{ Params: { id: string } }>(
    '/evaluation-keys/:id/revoke',
    ADMIN_PAGE,
    async (request, reply) =>
      attempt(reply, async () => {
        const key = await revokeEvaluationKey(
          engine,
          keys,
          request.params.id,
          dashboard.actor(request),
        )
        return done(reply, `Key ${key.name} is revoked.`, { type: 'keys' })
      }),
  )
}
