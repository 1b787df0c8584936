/**
 * The task admin's HTML: the login view and a placeholder dashboard page (the real dashboard
 * replaces this module). Every dynamic value is escaped.
 */

/** Escapes text for HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1c1e21}' +
  'main{max-width:44rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;' +
  'box-shadow:0 1px 3px #0002}h1{font-size:1.4rem;margin-top:0}label{display:block;margin:.8rem 0}' +
  'input{display:block;width:100%;padding:.5rem;font:inherit;box-sizing:border-box}' +
  'button{margin-top:1rem;padding:.5rem 1.2rem;font:inherit}.error{color:#b00020}' +
  'code{background:#f0f0f0;padding:0 .25rem}'

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>${head}<style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`
}

/** The login form; `error` is shown above it (a failed or throttled attempt). */
export function loginView(options: {
  title: string
  action: string
  error?: string
  username?: string
}): string {
  const error =
    options.error === undefined
      ? ''
      : `<p class="error" role="alert">${escapeHtml(options.error)}</p>`
  return page(
    `Log in · ${options.title}`,
    '',
    `<h1>${escapeHtml(options.title)}</h1>${error}
<form method="post" action="${escapeHtml(options.action)}">
<label>Username <input name="username" autocomplete="username" required value="${escapeHtml(options.username ?? '')}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form>`,
  )
}

/** The placeholder dashboard: where the JSON endpoints are, and the session's CSRF token. */
export function dashboardView(options: {
  title: string
  base: string
  csrfToken: string | null
  logoutPath: string | null
  pollInterval: number
  username: string
}): string {
  const base = options.base === '/' ? '' : options.base
  const links = [
    ['', 'task records (newest first)'],
    ['/metrics', 'metrics'],
    ['/queues', 'queues'],
    ['/schedules', 'schedules'],
    ['/audit', 'audit log'],
    ['/dashboard/stream', 'live stream (server-sent events)'],
  ]
    .map(([path = '', label = '']) => {
      const href = path === '' ? `${base}/` : `${base}${path}`
      return `<li><a href="${escapeHtml(href)}">${escapeHtml(label)}</a> <code>GET ${escapeHtml(href)}</code></li>`
    })
    .join('\n')
  const head =
    (options.csrfToken === null
      ? ''
      : `<meta name="csrf-token" content="${escapeHtml(options.csrfToken)}">`) +
    `<meta name="poll-interval" content="${String(options.pollInterval)}">`
  const logout =
    options.logoutPath === null ? '' : ` · <a href="${escapeHtml(options.logoutPath)}">Log out</a>`
  return page(
    options.title,
    head,
    `<h1>${escapeHtml(options.title)}</h1>
<p>Signed in as <strong>${escapeHtml(options.username)}</strong>${logout}</p>
<p>The task dashboard is coming; until then the JSON endpoints answer here:</p>
<ul>
${links}
</ul>`,
  )
}
