/**
 * The Segments pages: the list (with the flags that use each segment), create, edit
 * (included, excluded, rules) and delete. Deleting a segment a flag still uses answers 409
 * and changes nothing; the page shows which flags use it, with links.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SegmentInUseError, SegmentNotFoundError } from '../../flags/errors.js'
import type { Segment } from '../../flags/model.js'
import type { FlagService } from '../../flags/service.js'
import {
  DataTable,
  Empty,
  Field,
  FormActions,
  FormError,
  TimeCell,
  invalid,
  redirect,
  sendHtml,
  trigger,
  PageHead,
} from '../../ui/index.js'
import { SegmentExistsError } from '../errors.js'
import {
  formErrors,
  formOf,
  json,
  list,
  NO_ERRORS,
  raw,
  text,
  type FormBody,
  type FormErrors,
} from './forms.js'
import { attempt } from './answers.js'
import { NeedsRole, PAGE, ReadOnly, domId, type Dashboard } from './view.js'

const SEGMENT_FIELDS = ['key', 'name', 'description', 'included', 'excluded', 'rules', 'tags']

function SegmentTable(props: {
  dashboard: Dashboard
  segments: Segment[]
  usedBy: (key: string) => string[]
}) {
  const { dashboard, segments } = props
  return (
    <div
      id="segment-table"
      data-live="segment flag"
      data-live-url={dashboard.url('/segments/table')}
      data-live-highlight
    >
      <DataTable
        caption="Segments"
        columns={[
          'Key',
          'Name',
          { label: 'Included', numeric: true },
          { label: 'Excluded', numeric: true },
          { label: 'Rules', numeric: true },
          'Used by',
          { label: 'Updated', hideNarrow: true },
        ]}
        empty={
          segments.length === 0 && (
            <Empty title="No segments yet.">
              <p>
                A segment names a group of contexts (by key or by rules) that flag rules can target.
              </p>
            </Empty>
          )
        }
      >
        {segments.map((segment) => {
          const users = props.usedBy(segment.key)
          return (
            <tr id={domId('segment', segment.key)}>
              <td class="key">
                <a href={dashboard.url(`/segments/${encodeURIComponent(segment.key)}`)} safe>
                  {segment.key}
                </a>
              </td>
              <td safe>{segment.name}</td>
              <td class="num">{segment.included.length}</td>
              <td class="num">{segment.excluded.length}</td>
              <td class="num">{segment.rules.length}</td>
              <td class="mono" safe>
                {users.length === 0 ? '—' : users.join(', ')}
              </td>
              <TimeCell at={segment.updated_at} hideNarrow />
            </tr>
          )
        })}
      </DataTable>
    </div>
  )
}

function SegmentForm(props: {
  dashboard: Dashboard
  segment: Segment | null
  form: FormBody | null
  errors: FormErrors
}): JSX.Element {
  const { dashboard, segment, form, errors } = props
  const value = (name: string, fallback: string) => (form === null ? fallback : raw(form, name))
  const error = (name: string) => errors.fields.get(name)
  const area = (name: string, label: string, fallback: string, hint: string, rows: number) => (
    <Field label={label} for={`s-${name}`} error={error(name)} hint={hint}>
      <textarea
        id={`s-${name}`}
        name={name}
        rows={String(rows)}
        {...invalid(`s-${name}`, error(name))}
        safe
      >
        {value(name, fallback)}
      </textarea>
    </Field>
  )
  const action =
    segment === null
      ? dashboard.url('/segments')
      : dashboard.url(`/segments/${encodeURIComponent(segment.key)}`)
  const fields = (
    <>
      <div class="form-grid">
        {segment === null ? (
          <Field label="Key" for="s-key" error={error('key')} hint="Letters, digits, . _ -">
            <input
              id="s-key"
              name="key"
              value={value('key', '')}
              required
              {...invalid('s-key', error('key'))}
            />
          </Field>
        ) : (
          <input type="hidden" name="key" value={segment.key} />
        )}
        <Field label="Name" for="s-name" error={error('name')}>
          <input
            id="s-name"
            name="name"
            value={value('name', segment?.name ?? '')}
            required
            {...invalid('s-name', error('name'))}
          />
        </Field>
        <Field label="Tags" for="s-tags" error={error('tags')} hint="Comma-separated.">
          <input id="s-tags" name="tags" value={value('tags', segment?.tags.join(', ') ?? '')} />
        </Field>
      </div>
      {area('description', 'Description', segment?.description ?? '', 'Optional.', 2)}
      <div class="form-grid">
        {area(
          'included',
          'Included keys',
          segment?.included.join('\n') ?? '',
          'One context key per line; always members.',
          5,
        )}
        {area(
          'excluded',
          'Excluded keys',
          segment?.excluded.join('\n') ?? '',
          'One per line; never members (wins over included).',
          5,
        )}
      </div>
      {area(
        'rules',
        'Rules (JSON)',
        JSON.stringify(segment?.rules ?? [], null, 2),
        'A list of {"clauses": [{"attribute", "operator", "values"}]}; a context matching any rule is a member.',
        8,
      )}
    </>
  )
  if (!dashboard.can('operator'))
    return (
      <div id="segment-form" class="panel">
        <ReadOnly>{fields}</ReadOnly>
      </div>
    )
  return (
    <form
      id="segment-form"
      class="panel"
      hx-post={action}
      hx-target="this"
      hx-swap="outerHTML"
      data-keep
    >
      <FormError message={errors.form} />
      {fields}
      <FormActions
        submit={segment === null ? 'Create segment' : 'Save segment'}
        cancel={
          <a class="btn" href={dashboard.url('/segments')}>
            Cancel
          </a>
        }
      />
    </form>
  )
}

function DeleteResult(props: { dashboard: Dashboard; flags: readonly string[]; message: string }) {
  return (
    <div id="segment-delete-result" class="form-error" role="alert">
      <span safe>{props.message}</span>
      {props.flags.length === 0 ? (
        ''
      ) : (
        <ul>
          {props.flags.map((key) => (
            <li>
              <a
                class="mono"
                href={props.dashboard.url(`/flags/${encodeURIComponent(key)}`, {
                  tab: 'targeting',
                })}
                safe
              >
                {key}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

function segmentInput(form: FormBody) {
  return {
    key: raw(form, 'key').trim(),
    name: raw(form, 'name').trim(),
    ...(text(form, 'description') === undefined ? {} : { description: raw(form, 'description') }),
    included: list(form, 'included'),
    excluded: list(form, 'excluded'),
    rules: json(form, 'rules') ?? [],
    tags: list(form, 'tags'),
  }
}

/** Registers the segment pages. */
export function segmentPages(app: FastifyInstance, dashboard: Dashboard): void {
  const flags = (): FlagService => dashboard.requireFlags()
  const table = async () => {
    const service = flags()
    return (
      <SegmentTable
        dashboard={dashboard}
        segments={await service.listSegments()}
        usedBy={(key) => service.flagsUsingSegment(key)}
      />
    )
  }
  const shell = (request: FastifyRequest, title: string, children: JSX.Element) =>
    dashboard.page(request, { title, active: 'segments', children })

  app.get('/segments', PAGE, async (request, reply) =>
    sendHtml(
      reply,
      shell(
        request,
        'Segments',
        <>
          <PageHead title="Segments">
            {dashboard.for(request).can('operator') ? (
              <a
                class="btn btn-primary"
                href={dashboard.url('/segments/new')}
                data-action="new-segment"
              >
                New segment
              </a>
            ) : (
              ''
            )}
          </PageHead>
          {dashboard.flags() === undefined ? (
            <Empty title="Feature flags are not enabled on this server." />
          ) : (
            ((await table()) as 'safe')
          )}
        </>,
      ),
    ),
  )

  app.get('/segments/table', PAGE, async (_request, reply) => sendHtml(reply, await table()))

  app.get('/segments/new', PAGE, (request, reply) =>
    sendHtml(
      reply,
      shell(
        request,
        'New segment',
        <>
          <PageHead title="New segment" />
          {dashboard.for(request).can('operator') ? (
            <SegmentForm
              dashboard={dashboard.for(request)}
              segment={null}
              form={null}
              errors={NO_ERRORS}
            />
          ) : (
            <NeedsRole
              dashboard={dashboard.for(request)}
              role="operator"
              what="Creating a segment"
            />
          )}
        </>,
      ),
    ),
  )

  const save = async (request: FastifyRequest, reply: FastifyReply, existing: Segment | null) => {
    const form = formOf(request.body)
    return attempt(
      reply,
      async () => {
        const input = segmentInput(form)
        if (existing === null && (await flags().getSegment(input.key)) !== null)
          throw new SegmentExistsError(`Segment ${input.key} already exists.`, {
            details: [{ field: 'key', message: 'already exists' }],
          })
        const segment = await flags().saveSegment(
          existing === null ? input : { ...input, key: existing.key },
          dashboard.actor(request),
        )
        trigger(reply, {
          'ui-flash': {
            message: `Segment ${segment.key} is ${existing === null ? 'created' : 'saved'}.`,
            kind: 'success',
          },
        })
        return await redirect(
          request,
          reply,
          dashboard.url(`/segments/${encodeURIComponent(segment.key)}`),
        )
      },
      (error) => {
        return sendHtml(
          reply,
          <SegmentForm
            dashboard={dashboard.for(request)}
            segment={existing}
            form={form}
            errors={formErrors(error, SEGMENT_FIELDS)}
          />,
          422,
        )
      },
    )
  }

  app.post('/segments', PAGE, (request, reply) => save(request, reply, null))

  const requireSegment = async (key: string): Promise<Segment> => {
    const segment = await flags().getSegment(key)
    if (segment === null) throw new SegmentNotFoundError(`Segment ${key} does not exist.`, { key })
    return segment
  }

  app.get<{ Params: { key: string } }>('/segments/:key', PAGE, async (request, reply) => {
    const segment = await requireSegment(request.params.key)
    const users = flags().flagsUsingSegment(segment.key)
    const view = dashboard.for(request)
    return sendHtml(
      reply,
      shell(
        request,
        `${segment.name} · Segments`,
        <>
          <p>
            <a href={dashboard.url('/segments')}>← All segments</a>
          </p>
          <div class="page-head">
            <div>
              <h1 safe>{segment.name}</h1>
              <span class="key" safe>
                {segment.key}
              </span>
            </div>
            {view.can('operator') ? (
              <div class="actions">
                <button
                  class="btn btn-danger"
                  hx-post={dashboard.url(`/segments/${encodeURIComponent(segment.key)}/delete`)}
                  hx-target="#segment-delete-result"
                  hx-swap="outerHTML"
                  hx-confirm={`Delete segment ${segment.key}?`}
                >
                  Delete segment
                </button>
              </div>
            ) : (
              ''
            )}
          </div>
          <div id="segment-delete-result"></div>
          <p class="muted" safe>
            {users.length === 0 ? 'No flag uses this segment.' : `Used by ${users.join(', ')}.`}
          </p>
          <SegmentForm dashboard={view} segment={segment} form={null} errors={NO_ERRORS} />
        </>,
      ),
    )
  })

  app.post<{ Params: { key: string } }>('/segments/:key', PAGE, async (request, reply) =>
    save(request, reply, await requireSegment(request.params.key)),
  )

  app.post<{ Params: { key: string } }>('/segments/:key/delete', PAGE, async (request, reply) => {
    const key = request.params.key
    return attempt(
      reply,
      async () => {
        await flags().deleteSegment(key, dashboard.actor(request))
        trigger(reply, { 'ui-flash': { message: `Segment ${key} is deleted.`, kind: 'success' } })
        return await redirect(request, reply, dashboard.url('/segments'))
      },
      (error) => {
        const users =
          error instanceof SegmentInUseError
            ? ((error.details.flags as string[] | undefined) ?? [])
            : []
        return sendHtml(
          reply,
          <DeleteResult dashboard={dashboard} flags={users} message={error.message} />,
          error instanceof SegmentInUseError ? 409 : error.statusCode,
        )
      },
    )
  })
}
