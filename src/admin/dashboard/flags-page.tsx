/**
 * HTTP side of the Flags pages: the list and its live fragments, the create form, a flag's
 * tabs, the one-click kill switch, tab edits (JSON merge patches through the flag service,
 * validated after merging) and delete; the History tab's actions are in flag-history-page.tsx.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SwitchyardError, ValidationError } from '../../core/errors.js'
import { FlagNotFoundError } from '../../flags/errors.js'
import type { Flag, FlagType, RolloutEntry } from '../../flags/model.js'
import type { FlagService } from '../../flags/service.js'
import { Empty, redirect, sendHtml, trigger, PageHead } from '../../ui/index.js'
import {
  checked,
  fieldError,
  formErrors,
  formOf,
  json,
  list,
  NO_ERRORS,
  raw,
  text,
  type FormBody,
} from './forms.js'
import {
  CREATE_FIELDS,
  FLAG_STATUS_FILTERS,
  FLAG_TABS,
  FLAG_VIEW_TABS,
  FlagCreateForm,
  FlagList,
  FlagRow,
  FlagTable,
  FlagView,
  TAB_FIELDS,
  type FlagFilters,
  type FlagTab,
  type FlagViewTab,
} from './flags-view.js'
import { flagHistoryPages, sendHistoryView } from './flag-history-page.js'
import { attempt, done } from './answers.js'
import { RuleBuilder } from './flag-rule-builder.js'
import {
  applyOp,
  builderOp,
  readRules,
  readWeights,
  rolloutOf,
  rulesOf,
  ROLLOUT,
  targetingErrors,
} from './flag-rule-drafts.js'
import { NeedsRole, PAGE, param, type Dashboard } from './view.js'

/** `name = value` lines (blank lines skipped); a line without `=` is a field error. */
function pairs(form: FormBody, name: string): [string, string][] {
  return raw(form, name)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const at = line.indexOf('=')
      if (at <= 0)
        throw fieldError(name, `Expected "name = value" lines, got ${JSON.stringify(line)}.`)
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()]
    })
}

/** Variation lines `name = <JSON value>`; a bare word is a string for string flags. */
function variationsOf(form: FormBody, type: string): { name: string; value: unknown }[] {
  return pairs(form, 'variations').map(([name, value]) => {
    try {
      return { name, value: JSON.parse(value) as unknown }
    } catch {
      if (type === 'string') return { name, value }
      throw fieldError('variations', `The value of ${name} is not valid JSON: ${value}`)
    }
  })
}

/** A variation name, or rollout lines `variation = 25%` (weights in thousandths of a percent). */
function fallthroughOf(form: FormBody): string | RolloutEntry[] | undefined {
  const value = text(form, 'fallthrough')
  if (value === undefined) return undefined
  if (!value.includes('=')) return value
  return pairs(form, 'fallthrough').map(([variation, weight]) => {
    const percent = Number(weight.replace(/%$/, '').trim())
    if (!Number.isFinite(percent)) throw fieldError('fallthrough', `Not a percentage: ${weight}`)
    return { variation, weight: Math.round(percent * 1000) }
  })
}

/**
 * The metadata field (a JSON object, empty for none) as a merge patch that replaces the
 * flag's metadata: entries no longer listed become null. The flag service checks the values.
 */
function metadataPatch(form: FormBody, flag: Flag): Record<string, unknown> {
  const given = json(form, 'metadata') ?? {}
  if (typeof given !== 'object' || Array.isArray(given))
    throw fieldError('metadata', 'Expected a JSON object such as {"owner": "checkout-team"}.')
  // Keys come from the user: entries are defined (fromEntries), never assigned, so that a key
  // such as `__proto__` is an ordinary entry. Nested values are passed on as they are: the flag
  // service refuses them with their path.
  const removed = Object.keys(flag.metadata).map((key) => [key, null] as const)
  return Object.fromEntries([...removed, ...Object.entries(given)])
}

/** The merge patch a tab's form describes. */
function tabPatch(tab: FlagTab, form: FormBody, flag: Flag): Record<string, unknown> {
  switch (tab) {
    case 'overview':
      return {
        name: raw(form, 'name').trim(),
        description: raw(form, 'description'),
        status: raw(form, 'status'),
        maintainer: text(form, 'maintainer') ?? null,
        temporary: checked(form, 'temporary'),
      }
    case 'targeting': {
      const targets: Record<string, string[] | null> = {}
      for (const variation of Object.keys(flag.targets)) targets[variation] = null
      for (const [variation, keys] of pairs(form, 'targets')) {
        targets[variation] = keys
          .split(',')
          .map((key) => key.trim())
          .filter((key) => key !== '')
      }
      const rules = rulesOf(readRules(form, flag))
      const serve = raw(form, 'fallthrough')
      const fallthrough =
        serve === ROLLOUT ? rolloutOf(readWeights(form, 'fallthrough'), 'fallthrough') : serve
      return { targets, rules, fallthrough }
    }
    case 'variations':
      return {
        variations: json(form, 'variations') ?? [],
        off_variation: raw(form, 'off_variation').trim(),
      }
    case 'settings':
      return {
        prerequisites: pairs(form, 'prerequisites').map(([flag_key, variation]) => ({
          flag_key,
          variation,
        })),
        tags: list(form, 'tags'),
        metadata: metadataPatch(form, flag),
      }
  }
}

function filtersOf(request: FastifyRequest): FlagFilters {
  const status = param(request, 'status')
  return {
    q: param(request, 'q').slice(0, 200),
    status: FLAG_STATUS_FILTERS.includes(status) ? status : '',
  }
}

function tabOf(request: FastifyRequest): FlagViewTab {
  const tab = param(request, 'tab')
  return (FLAG_VIEW_TABS as readonly string[]).includes(tab) ? (tab as FlagViewTab) : 'overview'
}

/** Registers the flag pages. */
export function flagPages(app: FastifyInstance, dashboard: Dashboard): void {
  const flags = (): FlagService => dashboard.requireFlags()
  const requireFlag = async (key: string): Promise<Flag> => {
    const flag = await flags().getFlag(key)
    if (flag === null) throw new FlagNotFoundError(`Flag ${key} does not exist.`, { key })
    return flag
  }

  app.get('/flags', PAGE, async (request, reply) => {
    const filters = filtersOf(request)
    const service = dashboard.flags()
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: 'Flags',
        active: 'flags',
        children:
          service === undefined ? (
            <Empty title="Feature flags are not enabled on this server." />
          ) : (
            <FlagList
              dashboard={dashboard.for(request)}
              flags={await service.listFlags()}
              filters={filters}
            />
          ),
      }),
    )
  })

  app.get('/flags/table', PAGE, async (request, reply) =>
    sendHtml(
      reply,
      <FlagTable
        dashboard={dashboard.for(request)}
        flags={await flags().listFlags()}
        filters={filtersOf(request)}
      />,
    ),
  )

  app.get('/flags/row', PAGE, async (request, reply) => {
    const flag = await flags().getFlag(param(request, 'key'))
    if (flag === null) return sendHtml(reply, '')
    return sendHtml(
      reply,
      <FlagRow dashboard={dashboard.for(request)} flag={flag} filters={filtersOf(request)} />,
    )
  })

  app.get('/flags/new', PAGE, (request, reply) =>
    sendHtml(
      reply,
      dashboard.page(request, {
        title: 'New flag',
        active: 'flags',
        children: (
          <>
            <PageHead title="New flag" />
            {dashboard.for(request).can('operator') ? (
              <FlagCreateForm dashboard={dashboard} form={null} errors={NO_ERRORS} />
            ) : (
              <NeedsRole
                dashboard={dashboard.for(request)}
                role="operator"
                what="Creating a flag"
              />
            )}
          </>
        ),
      }),
    ),
  )

  app.post('/flags', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    return attempt(
      reply,
      async () => {
        const type = raw(form, 'type')
        const flag = await flags().createFlag(
          {
            key: raw(form, 'key').trim(),
            name: raw(form, 'name').trim(),
            type: type as FlagType,
            ...(text(form, 'description') === undefined
              ? {}
              : { description: raw(form, 'description') }),
            variations: variationsOf(form, type),
            off_variation: raw(form, 'off_variation').trim(),
            fallthrough: fallthroughOf(form) ?? '',
            // A flag made here serves its off variation until its author turns it on.
            enabled: checked(form, 'enabled'),
          },
          dashboard.actor(request),
        )
        trigger(reply, { 'ui-flash': { message: `Flag ${flag.key} is created.`, kind: 'success' } })
        return await redirect(
          request,
          reply,
          dashboard.url(`/flags/${encodeURIComponent(flag.key)}`),
        )
      },
      (error) => {
        return sendHtml(
          reply,
          <FlagCreateForm
            dashboard={dashboard}
            form={form}
            errors={formErrors(error, CREATE_FIELDS)}
          />,
          422,
        )
      },
    )
  })

  const view = (
    request: FastifyRequest,
    reply: FastifyReply,
    flag: Flag,
    tab: FlagTab,
    form: FormBody | null,
    error: SwitchyardError | null,
  ) =>
    sendHtml(
      reply,
      <FlagView
        dashboard={dashboard.for(request)}
        flag={flag}
        tab={tab}
        form={form}
        errors={
          error === null
            ? NO_ERRORS
            : tab === 'targeting'
              ? targetingErrors(error)
              : formErrors(error, TAB_FIELDS[tab])
        }
      />,
      error === null ? 200 : 422,
    )

  app.get<{ Params: { key: string } }>('/flags/:key', PAGE, async (request, reply) => {
    const flag = await requireFlag(request.params.key)
    const tab = tabOf(request)
    const versions = tab === 'history' ? await flags().listFlagVersions(flag.key) : []
    return sendHtml(
      reply,
      dashboard.page(request, {
        title: `${flag.name} · Flags`,
        active: 'flags',
        children: (
          <>
            <p>
              <a href={dashboard.url('/flags')}>← All flags</a>
            </p>
            {tab === 'history' ? (
              <FlagView
                dashboard={dashboard.for(request)}
                flag={flag}
                tab={tab}
                history={{ versions, form: null, errors: NO_ERRORS }}
              />
            ) : (
              <FlagView
                dashboard={dashboard.for(request)}
                flag={flag}
                tab={tab}
                form={null}
                errors={NO_ERRORS}
              />
            )}
          </>
        ),
      }),
    )
  })

  app.get<{ Params: { key: string } }>('/flags/:key/view', PAGE, async (request, reply) => {
    const flag = await requireFlag(request.params.key)
    const tab = tabOf(request)
    return tab === 'history'
      ? sendHistoryView(dashboard, request, reply, flag)
      : view(request, reply, flag, tab, null, null)
  })

  flagHistoryPages(app, dashboard)

  for (const tab of FLAG_TABS) {
    app.post<{ Params: { key: string } }>(`/flags/:key/${tab}`, PAGE, async (request, reply) => {
      const form = formOf(request.body)
      const before = await requireFlag(request.params.key)
      return attempt(
        reply,
        async () => {
          const flag = await flags().patchFlag(
            before.key,
            tabPatch(tab, form, before),
            dashboard.actor(request),
          )
          trigger(reply, { 'ui-toast': { message: `Flag ${flag.key} is saved.`, kind: 'success' } })
          return await view(request, reply, flag, tab, null, null)
        },
        (error) => {
          return view(request, reply, before, tab, form, error)
        },
      )
    })
  }

  // The rule builder's buttons: the targeting form as typed, one action applied, the rows again.
  app.post<{ Params: { key: string } }>('/flags/:key/rules/edit', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const flag = await requireFlag(request.params.key)
    return attempt(reply, () => {
      const op = builderOp(raw(form, 'op'))
      if (op === null)
        throw new ValidationError('Unknown rule builder action.', {
          details: [{ field: 'op', message: 'unknown action' }],
        })
      const rules = readRules(form, flag)
      const focus = applyOp(rules, op, flag)
      return sendHtml(
        reply,
        <RuleBuilder
          dashboard={dashboard.for(request)}
          flag={flag}
          rules={rules}
          errors={NO_ERRORS}
          focus={focus}
        />,
      )
    })
  })

  app.post<{ Params: { key: string } }>('/flags/:key/toggle', PAGE, async (request, reply) => {
    const key = request.params.key
    const on = raw(formOf(request.body), 'enabled') === '1'
    return attempt(reply, async () => {
      const flag = on
        ? await flags().enableFlag(key, dashboard.actor(request))
        : await flags().disableFlag(key, dashboard.actor(request))
      return await done(reply, `${flag.key} is ${flag.enabled ? 'on' : 'off'}.`, {
        type: 'flag',
        keys: [flag.key],
      })
    })
  })

  app.post<{ Params: { key: string } }>('/flags/:key/delete', PAGE, async (request, reply) => {
    const key = request.params.key
    return attempt(reply, async () => {
      await flags().deleteFlag(key, dashboard.actor(request))
      trigger(reply, { 'ui-flash': { message: `Flag ${key} is deleted.`, kind: 'success' } })
      return await redirect(request, reply, dashboard.url('/flags'))
    })
  })
}
