/**
 * The login view of the task admin: a plain form posting to `{tasks}/auth/login` (it works
 * without JavaScript); a failed or throttled attempt shows the form again with the reason and
 * the username kept.
 */
import { Layout } from '../../../ui/index.js'

/** The login page. */
export function LoginView(props: {
  title: string
  home: string
  assetsUrl: string
  action: string
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
          {props.error === undefined ? (
            ''
          ) : (
            <div class="form-error" role="alert" safe>
              {props.error}
            </div>
          )}
          <div class="field">
            <label for="login-username">Username</label>
            <input
              id="login-username"
              name="username"
              autocomplete="username"
              required
              autofocus
              value={props.username ?? ''}
            />
          </div>
          <div class="field">
            <label for="login-password">Password</label>
            <input
              id="login-password"
              name="password"
              type="password"
              autocomplete="current-password"
              required
            />
          </div>
          <div class="form-actions">
            <button class="btn btn-primary" type="submit">
              Log in
            </button>
          </div>
        </form>
      </div>
    </Layout>
  )
}
