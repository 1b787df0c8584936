/**
 * The login view of the task admin: a plain form posting to `{tasks}/auth/login` (it works
 * without JavaScript) with its CSRF token and the page to go to next; a failed or throttled attempt shows the form again with the reason and
 * the username kept.
 */
import { FormError, Layout, LoginFields } from '../../../ui/index.js'

/** The login page. */
export function LoginView(props: {
  title: string
  home: string
  assetsUrl: string
  action: string
  /** Where a successful login goes (already checked to be a page of this admin). */
  next: string
  /** The CSRF token of this browser's login form. */
  csrfToken: string
  error?: string | undefined
  username?: string | undefined
}): JSX.Element {
  return (
    <Layout
      title="Log in"
      product={props.title}
      home={props.home}
      assetsUrl={props.assetsUrl}
      nav={[]}
    >
      <div class="login panel">
        <h1 safe>{props.title}</h1>
        <form method="post" action={props.action}>
          <input type="hidden" name="csrf_token" value={props.csrfToken} />
          <input type="hidden" name="next" value={props.next} />
          <FormError message={props.error} />
          <LoginFields username={props.username ?? ''} />
        </form>
      </div>
    </Layout>
  )
}
