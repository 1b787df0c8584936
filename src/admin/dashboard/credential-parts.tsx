/**
 * The parts the Keys page's two credential kinds (evaluation keys, API tokens) share: the notice
 * that shows a new secret once, and a row's revoke button.
 */
import type { Dashboard } from './view.js'

/**
 * The one time a new secret is shown: its name, the warning that it cannot be read again, and
 * the value in a full-width read-only field with a Copy button.
 */
export function IssuedSecret(props: { kind: 'Key' | 'Token'; name: string; secret: string }) {
  const { kind, name, secret } = props
  const id = `issued-${kind.toLowerCase()}`
  return (
    <div class="issued-key" role="status">
      <p>
        {kind} <strong safe>{name}</strong> is created. Copy it now: it is shown this once and
        cannot be read again.
      </p>
      <div class="issued-value">
        <input
          id={id}
          class="mono"
          readonly
          value={secret}
          aria-label={`The ${kind.toLowerCase()} ${name}`}
        />
        <button type="button" class="btn" data-copy={id} safe>
          {`Copy ${kind.toLowerCase()}`}
        </button>
      </div>
    </div>
  )
}

/** A table row's revoke button: posts to `path` (under the dashboard) after a confirmation. */
export function RevokeButton(props: {
  dashboard: Dashboard
  path: string
  name: string
  confirm: string
}) {
  return (
    <button
      class="btn btn-danger btn-small"
      hx-post={props.dashboard.url(props.path)}
      hx-confirm={props.confirm}
      aria-label={`Revoke ${props.name}`}
    >
      Revoke
    </button>
  )
}
