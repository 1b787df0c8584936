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
  // The link is a JSX element, escaped here.
  const safeLink = (
    <a href={props.href} safe>
      {props.label}
    </a>
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
