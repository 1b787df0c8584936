/**
 * Type tests (`npm run check:types`, vitest typecheck mode): what the package's declarations
 * promise to TypeScript users — the Fastify augmentations of the plugin and the generic and
 * handle types of the engine's public surface. Nothing here runs.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { describe, expectTypeOf, it } from 'vitest'
import type {
  Engine,
  MaintenanceConfig,
  MaintenanceHandle,
  Page,
  RateLimitPolicy,
  RateLimitScopeHandle,
  RateLimitService,
  RequestState,
  RouteState,
  ScopeRateLimitPolicy,
} from '../../src/index.js'
import type { FlagService } from '../../src/flags/index.js'
import type { RecordFeed } from '../../src/stores/record-feed.js'
import type { SwitchyardPluginOptions } from '../../src/fastify/index.js'

describe('Fastify augmentations of the switchyard plugin', () => {
  it('decorates the instance with the engine and the request with its state', () => {
    expectTypeOf<FastifyInstance['switchyard']>().toEqualTypeOf<Engine>()
    expectTypeOf<FastifyRequest['state']>().toEqualTypeOf<RequestState>()
    expectTypeOf<RequestState['userId']>().toEqualTypeOf<string | number | null | undefined>()
  })

  it('takes the engine, rate-limit options and the admin app in its options', () => {
    expectTypeOf<SwitchyardPluginOptions['engine']>().toEqualTypeOf<Engine | undefined>()
    expectTypeOf<SwitchyardPluginOptions>().toHaveProperty('rateLimit')
    expectTypeOf<
      NonNullable<SwitchyardPluginOptions['rateLimit']>['redisCommandTimeout']
    >().toEqualTypeOf<number | undefined>()
  })
})

describe('the engine', () => {
  it('reaches each feature one way, with scope handles for global and per-service scopes', () => {
    expectTypeOf<Engine['maintenance']['global']>().toEqualTypeOf<MaintenanceHandle>()
    expectTypeOf<Engine['maintenance']['service']>().returns.toEqualTypeOf<MaintenanceHandle>()
    expectTypeOf<Engine['rateLimits']>().toEqualTypeOf<RateLimitService>()
    expectTypeOf<Engine['rateLimits']['global']>().toEqualTypeOf<RateLimitScopeHandle>()
    expectTypeOf<RateLimitScopeHandle['get']>().returns.toEqualTypeOf<ScopeRateLimitPolicy | null>()
    expectTypeOf<MaintenanceHandle['enable']>().returns.resolves.toEqualTypeOf<MaintenanceConfig>()
    expectTypeOf<Engine['flags']>().toEqualTypeOf<FlagService>()
  })

  it('keeps the flat operation names as aliases with the same types', () => {
    expectTypeOf<Engine['setGlobalRateLimit']>().toEqualTypeOf<RateLimitScopeHandle['set']>()
    expectTypeOf<Engine['listRateLimitPolicies']>().returns.toEqualTypeOf<RateLimitPolicy[]>()
    expectTypeOf<Engine['getGlobalMaintenance']>().returns.toEqualTypeOf<MaintenanceConfig>()
  })

  it('pages are generic over their items', () => {
    expectTypeOf<ReturnType<Engine['listRoutes']>>().toEqualTypeOf<Page<RouteState>>()
    expectTypeOf<Page<RouteState>['items']>().toEqualTypeOf<RouteState[]>()
  })

  it('no longer exposes its kernel parts', () => {
    expectTypeOf<Engine>().not.toHaveProperty('store')
    expectTypeOf<Engine>().not.toHaveProperty('replica')
    expectTypeOf<Engine>().not.toHaveProperty('registry')
    expectTypeOf<Engine>().not.toHaveProperty('enforcer')
    expectTypeOf<Engine>().not.toHaveProperty('scheduler')
  })
})

describe('generic ports', () => {
  it('a record feed carries its own event type to its listeners', () => {
    interface Change {
      id: string
    }
    expectTypeOf<Parameters<RecordFeed<Change>['subscribe']>[0]>().parameters.toEqualTypeOf<
      [Change, number]
    >()
  })
})
