/**
 * HTTP side of a flag's History tab: the tab itself (its versions loaded from the flag
 * service), and its three actions — roll back to a version, schedule an enable or a disable,
 * cancel a pending scheduled change — each answering with the tab again and a toast. A refused
 * action changes nothing: a refused schedule shows the form as typed with the message next to
 * its field (422), the others a toast with the API's message.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SwitchyardError } from '../../core/errors.js'
import { FlagNotFoundError } from '../../flags/errors.js'
import type { Flag } from '../../flags/model.js'
import type { FlagService } from '../../flags/service.js'
import { sendHtml, trigger } from '../../ui/index.js'
import { attempt } from './answers.js'
import { SCHEDULE_FIELDS, scheduledChangeSummary } from './flag-history-view.js'
import { FlagView } from './flags-view.js'
import { datetime, fieldError, formErrors, formOf, integer, raw, NO_ERRORS } from './forms.js'
import type { FormBody } from './forms.js'
import { PAGE, type Dashboard } from './view.js'

/**
 * Sends a flag's page content on its History tab (the live section's refresh, and the answer
 * of every History action): its versions, and the schedule form as typed with `error` when a
 * schedule was refused.
 */
export async function sendHistoryView(
  dashboard: Dashboard,
  request: FastifyRequest,
  reply: FastifyReply,
  flag: Flag,
  refused: { form: FormBody; error: SwitchyardError } | null = null,
): Promise<FastifyReply> {
  const versions = await dashboard.requireFlags().listFlagVersions(flag.key)
  return sendHtml(
    reply,
    <FlagView
      dashboard={dashboard.for(request)}
      flag={flag}
      tab="history"
      history={{
        versions,
        form: refused?.form ?? null,
        errors: refused === null ? NO_ERRORS : formErrors(refused.error, SCHEDULE_FIELDS),
      }}
    />,
    refused === null ? 200 : 422,
  )
}

/** Registers the History tab's actions. */
export function flagHistoryPages(app: FastifyInstance, dashboard: Dashboard): void {
  const flags = (): FlagService => dashboard.requireFlags()
  const requireFlag = async (key: string): Promise<Flag> => {
    const flag = await flags().getFlag(key)
    if (flag === null) throw new FlagNotFoundError(`Flag ${key} does not exist.`, { key })
    return flag
  }
  const toast = (reply: FastifyReply, message: string) =>
    trigger(reply, { 'ui-toast': { message, kind: 'success' } })

  app.post<{ Params: { key: string } }>('/flags/:key/rollback', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    return attempt(reply, async () => {
      const version = integer(form, 'version', 'The version')
      if (version === undefined) throw fieldError('version', 'Choose a version to roll back to.')
      const flag = await flags().rollbackFlag(request.params.key, version, dashboard.actor(request))
      toast(reply, `${flag.key} is rolled back to version ${version}.`)
      return await sendHistoryView(dashboard, request, reply, flag)
    })
  })

  app.post<{ Params: { key: string } }>('/flags/:key/schedule', PAGE, async (request, reply) => {
    const form = formOf(request.body)
    const before = await requireFlag(request.params.key)
    return attempt(
      reply,
      async () => {
        const action = raw(form, 'action')
        if (action !== 'enable' && action !== 'disable')
          throw fieldError('action', 'Choose Turn on or Turn off.')
        const at = datetime(form, 'at')
        if (at === undefined) throw fieldError('at', 'Give the date and time of the change.')
        const change = await flags().scheduleChange(
          before.key,
          { at, action },
          dashboard.actor(request),
        )
        toast(reply, `${before.key}: ${scheduledChangeSummary(change)} is scheduled.`)
        return await sendHistoryView(dashboard, request, reply, await requireFlag(before.key))
      },
      (error) => sendHistoryView(dashboard, request, reply, before, { form, error }),
    )
  })

  app.post<{ Params: { key: string; id: string } }>(
    '/flags/:key/schedule/:id/cancel',
    PAGE,
    async (request, reply) =>
      attempt(reply, async () => {
        const { key, id } = request.params
        const change = await flags().getScheduledChange(key, id)
        await flags().cancelScheduledChange(key, id, dashboard.actor(request))
        toast(reply, `${key}: the scheduled ${scheduledChangeSummary(change)} is cancelled.`)
        return await sendHistoryView(dashboard, request, reply, await requireFlag(key))
      }),
  )
}
