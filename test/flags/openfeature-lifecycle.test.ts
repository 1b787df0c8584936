/**
 * OpenFeature's provider-state, event, hook and tracking scenarios for the switchyard
 * provider, written from the specification's Gherkin suites (open-feature/spec,
 * `specification/assets/gherkin`: `evaluation_v2.feature` — provider not ready, fatal, status
 * accessibility, evaluation options with hooks —, `events.feature`, `hooks.feature` and
 * `tracking.feature`). Each scenario runs through a real `@openfeature/server-sdk` client.
 * Here the service's status is driven directly; the real failures behind each transition (an
 * unreachable Redis, a Redis that goes away, a corrupt state file, a reload that fails) are in
 * `openfeature-states.test.ts`.
 */
import {
  OpenFeature,
  ProviderEvents,
  ProviderStatus,
  type Client,
  type EvaluationDetails,
  type FlagValue,
  type Hook,
  type JsonValue,
} from '@openfeature/server-sdk'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/errors.js'
import { FlagService, type TrackingEvent } from '../../src/flags/index.js'
import { SwitchyardProvider, useOpenFeature } from '../../src/flags/openfeature.js'
import { until } from '../helpers/wait.js'
import { booleanFlag, staticFlag } from './helpers.js'

// The SDK logs failed initialisations; these tests cause them on purpose.
const quiet = () => undefined
OpenFeature.setLogger({ error: quiet, warn: quiet, info: quiet, debug: quiet })

let domains = 0
const nextDomain = () => `lifecycle-${++domains}`

afterAll(async () => {
  await OpenFeature.close()
})

/** A flag service with one flag of each type, saved but not yet loaded (`start()` not called). */
async function unloadedService(): Promise<FlagService> {
  const service = new FlagService()
  await service.saveFlag(booleanFlag('boolean-flag'))
  await service.saveFlag(
    staticFlag('string-flag', 'string', { greeting: 'hi', bye: 'bye' }, 'greeting'),
  )
  await service.saveFlag(staticFlag('integer-flag', 'integer', { one: 1, ten: 10 }, 'ten'))
  await service.saveFlag(staticFlag('float-flag', 'float', { tenth: 0.1, half: 0.5 }, 'half'))
  await service.saveFlag(
    staticFlag('object-flag', 'json', { empty: {}, template: { showImages: true } }, 'template'),
  )
  return service
}

const everyType = [
  ['Boolean', 'boolean-flag', false],
  ['String', 'string-flag', 'bye'],
  ['Integer', 'integer-flag', 1],
  ['Float', 'float-flag', 0.1],
  ['Object', 'object-flag', { a: 1 }],
] as const

function evaluate(
  client: Client,
  kind: string,
  key: string,
  fallback: unknown,
): Promise<EvaluationDetails<FlagValue>> {
  switch (kind) {
    case 'Boolean':
      return client.getBooleanDetails(key, fallback as boolean)
    case 'String':
      return client.getStringDetails(key, fallback as string)
    case 'Object':
      return client.getObjectDetails(key, fallback as JsonValue)
    default:
      return client.getNumberDetails(key, fallback as number)
  }
}

/** Registers a provider for `service` on a fresh domain without waiting; returns its client. */
function register(service: FlagService): {
  client: Client
  provider: SwitchyardProvider
  domain: string
} {
  const domain = nextDomain()
  const provider = new SwitchyardProvider(service)
  OpenFeature.setProvider(domain, provider)
  return { client: OpenFeature.getClient(domain), provider, domain }
}

/** Resolves when `client` has seen `event`. */
function once(client: Client, event: ProviderEvents): Promise<unknown> {
  return new Promise((resolve) => {
    const handler = (details: unknown) => {
      client.removeHandler(event, handler)
      resolve(details)
    }
    client.addHandler(event, handler)
  })
}

describe('provider status (evaluation_v2.feature)', () => {
  it.each(everyType)(
    'Provider not ready error: %s until the flags are loaded, then READY',
    async (kind, key, fallback) => {
      const service = await unloadedService()
      const { client } = register(service)
      expect(client.providerStatus).toBe(ProviderStatus.NOT_READY)
      expect(await evaluate(client, kind, key, fallback)).toMatchObject({
        value: fallback,
        reason: 'ERROR',
        errorCode: 'PROVIDER_NOT_READY',
      })
      const ready = once(client, ProviderEvents.Ready)
      await service.start()
      await ready
      expect(client.providerStatus).toBe(ProviderStatus.READY)
      expect((await evaluate(client, kind, key, fallback)).errorCode).toBeUndefined()
    },
  )

  it.each(everyType)(
    'Provider in fatal state error: %s after a configuration error',
    async (kind, key, fallback) => {
      const service = await unloadedService()
      const { client } = register(service)
      const error = once(client, ProviderEvents.Error)
      service.markUnavailable(new ConfigError('the state file is corrupt'), true)
      expect(await error).toMatchObject({ message: 'the state file is corrupt' })
      expect(client.providerStatus).toBe(ProviderStatus.FATAL)
      expect(await evaluate(client, kind, key, fallback)).toMatchObject({
        value: fallback,
        reason: 'ERROR',
        errorCode: 'PROVIDER_FATAL',
      })
    },
  )

  it('Provider status accessibility: READY, ERROR, READY, STALE, READY, FATAL', async () => {
    const service = await unloadedService()
    await service.start()
    const domain = nextDomain()
    await OpenFeature.setProviderAndWait(domain, new SwitchyardProvider(service))
    const client = OpenFeature.getClient(domain)
    expect(client.providerStatus).toBe(ProviderStatus.READY)

    const error = once(client, ProviderEvents.Error)
    service.markUnavailable(new Error('Redis unreachable'), false)
    expect(await error).toMatchObject({ message: 'Redis unreachable', errorCode: 'GENERAL' })
    expect(client.providerStatus).toBe(ProviderStatus.ERROR)
    // The flags last loaded stay in force while in ERROR.
    expect(await client.getBooleanDetails('boolean-flag', false)).toMatchObject({
      value: true,
      reason: 'STATIC',
    })
    let ready = once(client, ProviderEvents.Ready)
    await service.start()
    await ready
    expect(client.providerStatus).toBe(ProviderStatus.READY)

    const stale = once(client, ProviderEvents.Stale)
    service.markStale(new Error('changes may have been missed'))
    expect(await stale).toMatchObject({ message: 'changes may have been missed' })
    expect(client.providerStatus).toBe(ProviderStatus.STALE)
    expect(await client.getBooleanValue('boolean-flag', false)).toBe(true)
    ready = once(client, ProviderEvents.Ready)
    await service.start()
    await ready
    expect(client.providerStatus).toBe(ProviderStatus.READY)

    service.markUnavailable(new ConfigError('bad'), true)
    expect(client.providerStatus).toBe(ProviderStatus.FATAL)
    // FATAL is final: neither a load nor a failure changes it.
    await service.start()
    service.markUnavailable(new Error('again'), false)
    expect(client.providerStatus).toBe(ProviderStatus.FATAL)
  })

  it('Provider in error state at initialisation: ERROR, then READY once the flags load', async () => {
    const service = await unloadedService()
    service.markUnavailable(new Error('Redis unreachable'), false)
    const { client } = register(service)
    await until(() => client.providerStatus === ProviderStatus.ERROR)
    // Nothing was loaded: the answer says why instead of claiming the flag does not exist.
    expect(await client.getBooleanDetails('stored-elsewhere', false)).toMatchObject({
      value: false,
      reason: 'ERROR',
      errorCode: 'GENERAL',
      errorMessage: expect.stringContaining('Redis unreachable') as unknown,
    })
    const ready = once(client, ProviderEvents.Ready)
    await service.start()
    await ready
    expect(client.providerStatus).toBe(ProviderStatus.READY)
    expect(await client.getBooleanValue('boolean-flag', false)).toBe(true)
  })

  it('a stale mark only applies to a ready service', async () => {
    const service = await unloadedService()
    service.markStale(new Error('gap'))
    expect(service.status).toBe('not_ready')
    service.markUnavailable(new Error('down'), false)
    service.markStale(new Error('gap'))
    expect(service.status).toBe('error')
  })

  it('useOpenFeature() does not wait for flags that are not loaded yet', async () => {
    const service = await unloadedService()
    const domain = nextDomain()
    const provider = await useOpenFeature(service, { domain })
    const client = OpenFeature.getClient(domain)
    expect(provider.metadata.name).toBe('switchyard')
    expect(client.providerStatus).toBe(ProviderStatus.NOT_READY)
    const ready = once(client, ProviderEvents.Ready)
    await service.start()
    await ready
    expect(await client.getStringValue('string-flag', 'x')).toBe('hi')
  })
})

describe('events.feature', () => {
  it('PROVIDER_READY is emitted when the provider is set and initialises', async () => {
    const service = await unloadedService()
    await service.start()
    const domain = nextDomain()
    const client = OpenFeature.getClient(domain)
    const ready = once(client, ProviderEvents.Ready)
    await OpenFeature.setProviderAndWait(domain, new SwitchyardProvider(service))
    expect(await ready).toMatchObject({ domain })
  })

  it('PROVIDER_ERROR is emitted when the provider fails to initialise', async () => {
    const service = await unloadedService()
    service.markUnavailable(new ConfigError('unusable store'), true)
    const domain = nextDomain()
    const client = OpenFeature.getClient(domain)
    const error = once(client, ProviderEvents.Error)
    await expect(
      OpenFeature.setProviderAndWait(domain, new SwitchyardProvider(service)),
    ).rejects.toThrow(/unusable store/)
    expect(await error).toMatchObject({ message: 'unusable store' })
  })

  it('PROVIDER_CONFIGURATION_CHANGED names the modified flag', async () => {
    const service = await unloadedService()
    await service.start()
    const domain = nextDomain()
    await OpenFeature.setProviderAndWait(domain, new SwitchyardProvider(service))
    const client = OpenFeature.getClient(domain)
    const changed = once(client, ProviderEvents.ConfigurationChanged)
    await service.saveFlag(booleanFlag('changing-flag'))
    expect(await changed).toMatchObject({ flagsChanged: ['changing-flag'] })
  })
})

describe('hooks.feature and evaluation options with hooks', () => {
  type Stage = 'before' | 'after' | 'error' | 'finally'
  function recordingHook(
    name: string,
    calls: { hook: string; stage: Stage; details?: object }[],
  ): Hook {
    return {
      before: () => void calls.push({ hook: name, stage: 'before' }),
      after: (_context, details) => void calls.push({ hook: name, stage: 'after', details }),
      error: () => void calls.push({ hook: name, stage: 'error' }),
      finally: (_context, details) => void calls.push({ hook: name, stage: 'finally', details }),
    }
  }

  async function hookedClient() {
    const service = await unloadedService()
    await service.saveFlag(staticFlag('wrong-flag', 'string', { one: 'uno', two: 'dos' }, 'one'))
    await service.start()
    const domain = nextDomain()
    await OpenFeature.setProviderAndWait(domain, new SwitchyardProvider(service))
    const calls: { hook: string; stage: Stage; details?: object }[] = []
    const client = OpenFeature.getClient(domain)
    client.addHooks(recordingHook('client', calls))
    return { client, calls }
  }

  it('passes the evaluation details to after and finally hooks', async () => {
    const { client, calls } = await hookedClient()
    await client.getBooleanDetails('boolean-flag', false)
    expect(calls.map((call) => call.stage)).toEqual(['before', 'after', 'finally'])
    for (const call of calls.slice(1)) {
      expect(call.details).toMatchObject({
        flagKey: 'boolean-flag',
        value: true,
        variant: 'on',
        reason: 'STATIC',
      })
      expect((call.details as { errorCode?: string }).errorCode).toBeUndefined()
    }
  })

  it.each([
    ['Flag not found', 'String', 'missing-flag', 'uh-oh', 'FLAG_NOT_FOUND'],
    ['Type error', 'Boolean', 'wrong-flag', false, 'TYPE_MISMATCH'],
  ] as const)(
    '%s: the error hook runs, finally sees the error',
    async (_, kind, key, fallback, code) => {
      const { client, calls } = await hookedClient()
      await evaluate(client, kind, key, fallback)
      expect(calls.map((call) => call.stage)).toEqual(['before', 'error', 'finally'])
      expect(calls[2]!.details).toMatchObject({
        flagKey: key,
        value: fallback,
        reason: 'ERROR',
        errorCode: code,
      })
      expect((calls[2]!.details as { variant?: string }).variant).toBeUndefined()
    },
  )

  it('runs hooks given in the evaluation options, in the specified order', async () => {
    const { client, calls } = await hookedClient()
    await client.getBooleanDetails(
      'boolean-flag',
      false,
      {},
      {
        hooks: [recordingHook('first', calls), recordingHook('second', calls)],
      },
    )
    // before: API, client, invocation in order; after and finally in reverse.
    expect(calls.map((call) => `${call.stage}:${call.hook}`)).toEqual([
      'before:client',
      'before:first',
      'before:second',
      'after:second',
      'after:first',
      'after:client',
      'finally:second',
      'finally:first',
      'finally:client',
    ])
  })
})

describe('tracking.feature', () => {
  let stop: (() => void) | null = null
  afterEach(() => {
    stop?.()
    stop = null
  })

  async function tracked() {
    const service = await unloadedService()
    await service.start()
    const domain = nextDomain()
    const provider = new SwitchyardProvider(service)
    await OpenFeature.setProviderAndWait(domain, provider)
    const events: TrackingEvent[] = []
    stop = service.tracking.subscribe((batch) => events.push(...batch))
    return { client: OpenFeature.getClient(domain), provider, events }
  }

  it("calls the provider's track: the event reaches the tracking stream", async () => {
    const { client, events } = await tracked()
    client.track('the-event', { targetingKey: 'user-1' }, { value: 3, plan: 'pro' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(events).toEqual([
      {
        event_name: 'the-event',
        context_key: 'user-1',
        value: 3,
        details: { plan: 'pro' },
        timestamp: expect.any(String),
      },
    ])
  })

  it.each([[''], [null]])(
    'Invalid event name %j: nothing is tracked, the operation errors',
    async (name) => {
      const { client, provider, events } = await tracked()
      expect(() => provider.track(name as unknown as string, {}, {})).toThrow(/name/)
      client.track(name as unknown as string, { targetingKey: 'user-1' })
      await new Promise((resolve) => setImmediate(resolve))
      expect(events).toEqual([])
    },
  )
})
