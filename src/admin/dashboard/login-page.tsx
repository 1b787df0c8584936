/**
 * The login view (`{admin}/login`) and logout (`POST {admin}/logout`).
 *
 * The form posts to the API's own `POST /api/auth/login` (the page's script sends it as JSON),
 * so login throttling, the session cookie and its flags stay in one place; a failed login
 * shows the API's message. Logout revokes the session on the server (every instance) and
 * clears the cookie, as `POST /api/auth/logout` does.
 */
import type { FastifyInstance } from 'fastify'
import { endSession } from '../auth/end-session.js'
import { SESSION_COOKIE } from '../auth/guard.js'
import { sessionCookiePath } from '../context.js'
import {
  Layout,
  LoginFields,
  redirect,
  safeNextPath,
  sendHtml,
  type Toast,
} from '../../ui/index.js'
import { PUBLIC_PAGE, SESSION_PAGE, param, type Dashboard } from './view.js'

/** A `next` URL only when it stays inside the dashboard (no open redirect); else its home. */
export function safeNext(dashboard: Dashboard, next: string): string {
  return safeNextPath(next, {
    base: dashboard.base,
    home: dashboard.url('/'),
    excluded: [`${dashboard.base}/login`],
  })
}

function LoginView(props: { dashboard: Dashboard; next: string; flash: Toast[] }): JSX.Element {
  const { dashboard } = props
  return (
    <Layout
      title="Log in"
      product="switchyard"
      home={dashboard.url('/')}
      assetsUrl={`${dashboard.base}/assets/`}
      nav={[]}
      flash={props.flash}
    >
      <div class="login panel">
        <h1>Log in</h1>
        <form
          id="login-form"
          method="post"
          action={dashboard.url('/api/auth/login')}
          data-login
          data-next={props.next}
        >
          <div id="login-error" class="form-error" role="alert" hidden></div>
          <LoginFields />
          <noscript>
            <p class="form-error">The dashboard needs JavaScript.</p>
          </noscript>
        </form>
      </div>
    </Layout>
  )
}

/** Registers the login view and logout. */
export function loginPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { sessions } = dashboard.admin

  app.get('/login', PUBLIC_PAGE, async (request, reply) => {
    const next = safeNext(dashboard, param(request, 'next'))
    // Open mode needs no login; a valid session goes straight on.
    if (sessions === null) return redirect(request, reply, next)
    const cookie = request.cookies[SESSION_COOKIE]
    if (cookie !== undefined && cookie !== '' && (await sessions.resolve(cookie)) !== null) {
      return redirect(request, reply, next)
    }
    const flash: Toast[] =
      param(request, 'logged_out') === '1' ? [{ message: 'You are logged out.', kind: 'info' }] : []
    return sendHtml(reply, <LoginView dashboard={dashboard} next={next} flash={flash} />)
  })

  app.post('/logout', SESSION_PAGE, async (request, reply) => {
    const principal = request.switchyardAdmin
    void reply.clearCookie(SESSION_COOKIE, { path: sessionCookiePath(dashboard.admin) })
    if (principal?.session != null) await endSession(dashboard.admin, principal.session)
    return redirect(request, reply, dashboard.url('/login', { logged_out: 1 }))
  })
}
