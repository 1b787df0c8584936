/**
 * The shared dashboard layer: layout, components, assets and HTTP helpers used by the
 * route-control dashboard (admin app) and the task dashboard. It imports neither half.
 */
export { UiAssets, uiAssets, type Asset, type AssetName } from './assets.js'
export {
  Badge,
  ClockTime,
  DataTable,
  Empty,
  Field,
  FilterSelect,
  FilterSubmit,
  FormActions,
  FormError,
  ListPager,
  LiveList,
  LoginFields,
  PageHead,
  Pager,
  SearchBox,
  TableHead,
  Tabs,
  Time,
  TimeCell,
  Truncated,
  invalid,
  type Column,
  type FilterOption,
  type Tone,
} from './components.js'
export { sendErrorAnswer, type ErrorAnswer } from './error-answer.js'
export {
  PAGE_HEADERS,
  isHtmx,
  prepareDashboardScope,
  redirect,
  registerAssetsRoute,
  sendHtml,
  trigger,
  sendToLogin,
  type ClientEvents,
  type Toast,
} from './http.js'
export {
  dashboardPage,
  DialogContent,
  Layout,
  LiveIndicator,
  type DashboardPageProps,
  type DashboardShell,
  type DashboardUser,
  type LayoutProps,
  type LiveStream,
  type NavItem,
  type NavPage,
  type ServiceSwitcher,
  type SessionWatch,
  type SubNav,
  withNext,
} from './layout.js'
export { domId, pageParam, param, params, withQuery, type QueryValues } from './request.js'
export { safeNextPath } from './next-path.js'
export { formatAbsolute, formatDuration, formatRelative } from './time.js'
