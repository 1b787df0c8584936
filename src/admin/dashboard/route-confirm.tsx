/**
 * The confirmations of the two one-click route actions, shown in the action dialog before
 * anything changes: **Enable** says exactly what it removes (a disable or maintenance with its
 * reason and end, the deprecation headers clients get, the environment gating, a scheduled
 * window), because enabling a deprecated or env-gated route silently dropped its headers or
 * gating; **Cancel window** says which window goes. Both then post the action as before.
 */
import type { RouteState } from '../../core/route-state.js'
import { DialogContent, Time } from '../../ui/index.js'
import type { CoveringMaintenance } from './maintenance-coverage.js'
import type { Dashboard } from './view.js'

/** One thing an action removes, as a sentence part: a lead and an optional time. */
interface Removal {
  text: string
  at?: string
}

const quoted = (reason: string) => (reason === '' ? '' : ` (“${reason}”)`)

/** What enabling `state` removes, in the order the route's settings apply. */
export function enableRemovals(state: RouteState): Removal[] {
  const removals: Removal[] = []
  switch (state.status) {
    case 'disabled':
      removals.push(
        state.until === null
          ? { text: `the disable${quoted(state.reason)}` }
          : { text: `the disable${quoted(state.reason)}, which would end`, at: state.until },
      )
      break
    case 'maintenance':
      removals.push(
        state.window?.end == null
          ? { text: `the maintenance${quoted(state.reason)}` }
          : {
              text: `the maintenance${quoted(state.reason)}, which would end`,
              at: state.window.end,
            },
      )
      break
    case 'deprecated': {
      const headers = ['Deprecation']
      if (state.sunset !== null) headers.push('Sunset')
      if (state.use_instead !== null) headers.push('Link')
      removals.push({
        text: `the deprecation: clients stop getting the ${headers.join(', ')} header${headers.length > 1 ? 's' : ''}`,
      })
      break
    }
    case 'env_gated':
      removals.push({
        text: `the environment gating: it answers in every environment, not only ${state.envs.join(', ')}`,
      })
      break
    case 'active':
      break
  }
  if (state.status === 'active' && state.window !== null) removals.push(windowRemoval(state))
  return removals
}

function windowRemoval(state: RouteState): Removal {
  const start = state.window?.start ?? null
  return start === null
    ? { text: 'the scheduled maintenance window' }
    : { text: 'the maintenance window starting', at: start }
}

function Removals(props: { removals: Removal[]; now: number }): JSX.Element {
  return (
    <ul>
      {props.removals.map((removal) => (
        <li>
          <span safe>{removal.text}</span>
          {removal.at === undefined ? (
            ''
          ) : (
            <>
              {' '}
              <Time at={removal.at} now={props.now} />
            </>
          )}
        </li>
      ))}
    </ul>
  )
}

function ConfirmActions(props: {
  dashboard: Dashboard
  state: RouteState
  action: 'enable' | 'cancel'
  label: string
  keep: string
}): JSX.Element {
  const { dashboard, state } = props
  return (
    <div class="form-actions">
      <button
        class="btn btn-primary"
        hx-post={dashboard.url(`/routes/${props.action}`)}
        hx-vals={JSON.stringify({ route: state.route, service: state.service })}
        hx-swap="none"
        safe
      >
        {props.label}
      </button>
      <button type="button" class="btn" data-dialog-close safe>
        {props.keep}
      </button>
    </div>
  )
}

/** The Enable confirmation of one route. */
export function EnableConfirm(props: {
  dashboard: Dashboard
  state: RouteState
  now: number
  covered: CoveringMaintenance
}): JSX.Element {
  const { dashboard, state, now, covered } = props
  const removals = enableRemovals(state)
  return (
    <DialogContent title={`Enable ${state.route}?`}>
      <p>
        It becomes <strong>ACTIVE</strong>
        {removals.length === 0 ? '.' : ', which removes:'}
      </p>
      {removals.length === 0 ? '' : <Removals removals={removals} now={now} />}
      {covered === null ? (
        ''
      ) : (
        <p class="muted">
          {covered === 'global' ? 'Global' : 'Service'} maintenance still answers 503 for it until
          that maintenance is turned off.
        </p>
      )}
      <ConfirmActions
        dashboard={dashboard}
        state={state}
        action="enable"
        label="Enable"
        keep="Keep as it is"
      />
    </DialogContent>
  )
}

/** The Cancel window confirmation of one route. */
export function CancelWindowConfirm(props: {
  dashboard: Dashboard
  state: RouteState
  now: number
}): JSX.Element {
  const { dashboard, state, now } = props
  const start = state.window?.start ?? null
  const end = state.window?.end ?? null
  return (
    <DialogContent title={`Cancel the maintenance window of ${state.route}?`}>
      <p>
        The window
        {start === null ? (
          ''
        ) : (
          <>
            {' '}
            starting <Time at={start} now={now} />
          </>
        )}
        {end === null ? (
          ''
        ) : (
          <>
            {' '}
            ending <Time at={end} now={now} />
          </>
        )}{' '}
        is removed and the route becomes <strong>ACTIVE</strong>.
      </p>
      <ConfirmActions
        dashboard={dashboard}
        state={state}
        action="cancel"
        label="Cancel window"
        keep="Keep the window"
      />
    </DialogContent>
  )
}
