/**
 * The table cell that names a route in the dashboard's logs (audit, blocked requests): the
 * route as a link that narrows the list to it, a link to the route itself on the Routes page,
 * and the route's service under it.
 */

/** A route key (`GET:/v1/users`), as opposed to the scope of a maintenance or a policy. */
const ROUTE_KEY = /^[A-Z]+:\//

/**
 * A route's cell: `label` linked to `href`, then (when `label` is a route key and `routeHref`
 * is given) a link to the route on the Routes page, and the service (when there is one) below.
 */
export function RouteCell(props: {
  label: string
  href: string
  service: string | null | undefined
  /** The URL of a route on the Routes page. */
  routeHref?: (route: string) => string
}): JSX.Element {
  const toRoute =
    props.routeHref !== undefined && ROUTE_KEY.test(props.label)
      ? props.routeHref(props.label)
      : null
  // The links are JSX elements, escaped here.
  const safeLink = (
    <>
      <a href={props.href} title="Only this route" safe>
        {props.label}
      </a>
      {toRoute === null ? (
        ''
      ) : (
        <>
          {' '}
          <a class="route-link" href={toRoute} title="This route on the Routes page">
            route
            <span class="visually-hidden" safe>{` ${props.label} on the Routes page`}</span> ›
          </a>
        </>
      )}
    </>
  )
  if (props.service == null) return <td class="key">{safeLink}</td>
  return (
    <td class="key">
      {safeLink}
      <div class="muted" safe>
        {props.service}
      </div>
    </td>
  )
}
