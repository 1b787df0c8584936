/**
 * How a dashboard answers a request that failed: an htmx fragment request gets a toast with
 * the message (and the status, with an empty body), a page request an error page that says
 * what went wrong and links back to the dashboard's home.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Empty } from './components.js'
import { isHtmx, sendHtml, trigger } from './http.js'

/** What {@link sendErrorAnswer} needs to know about the failure and the dashboard. */
export interface ErrorAnswer {
  status: number
  /** Shown to the user: never a stack or an internal detail. */
  message: string
  /** The link back: the dashboard's home. */
  back: { href: string; label: string }
  /** The dashboard's own page around the error panel. */
  page: (title: string, children: JSX.Element) => JSX.Element
}

/** Answers a failed page or fragment request (see the module comment). */
export function sendErrorAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: ErrorAnswer,
): FastifyReply | Promise<FastifyReply> {
  const { status, message } = answer
  if (isHtmx(request)) {
    trigger(reply, { 'ui-toast': { message, kind: 'error' } })
    return reply.status(status).send('')
  }
  const title = `Error ${status}`
  return sendHtml(
    reply,
    answer.page(
      title,
      <div class="panel">
        <Empty title={title}>
          <p safe>{message}</p>
          <p>
            <a href={answer.back.href} safe>
              {answer.back.label}
            </a>
          </p>
        </Empty>
      </div>,
    ),
    status,
  )
}
