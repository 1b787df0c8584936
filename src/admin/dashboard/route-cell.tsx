/**
 * The table cell that names a route in the dashboard's logs (audit, blocked requests): the
 * route as a link that narrows the list to it, and the route's service under it.
 */

/** A route's cell: `label` linked to `href`, the service (when there is one) below. */
export function RouteCell(props: {
  label: string
  href: string
  service: string | null | undefined
}): JSX.Element {
  // The service line is a JSX element, escaped where it was built.
  const safeService =
    props.service == null ? (
      ''
    ) : (
      <div class="muted" safe>
        {props.service}
      </div>
    )
  return (
    <td class="key">
      <a href={props.href} safe>
        {props.label}
      </a>
      {safeService}
    </td>
  )
}
