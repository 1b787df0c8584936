/**
 * The test page of the web-provider test, bundled with esbuild and served from localhost:
 * the stock `@openfeature/web-sdk` with `@openfeature/ofrep-web-provider`, driven from the test
 * through `globalThis.harness`. No switchyard code runs in the browser.
 */
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import {
  OpenFeature,
  ProviderEvents,
  type EvaluationContext,
  type JsonValue,
} from '@openfeature/web-sdk'

/** How the test starts the provider. */
interface Start {
  baseUrl: string
  key: string
  context: EvaluationContext
  options: Record<string, unknown>
}

const changes: string[][] = []

const harness = {
  /** Registers the OFREP web provider and waits until it is ready. */
  async start({ baseUrl, key, context, options }: Start): Promise<void> {
    OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
      const flagsChanged: unknown = details?.flagsChanged
      changes.push(Array.isArray(flagsChanged) ? flagsChanged.map(String) : [])
    })
    await OpenFeature.setContext(context)
    await OpenFeature.setProviderAndWait(
      new OFREPWebProvider({ baseUrl, headers: [['Authorization', `Bearer ${key}`]], ...options }),
    )
  },

  /** Changes the static context (the provider re-fetches the bulk evaluation). */
  async setContext(context: EvaluationContext): Promise<void> {
    await OpenFeature.setContext(context)
  },

  /** The evaluation details of one flag, as plain data. */
  details(kind: string, key: string, fallback: unknown) {
    const client = OpenFeature.getClient()
    const details =
      kind === 'boolean'
        ? client.getBooleanDetails(key, fallback as boolean)
        : kind === 'string'
          ? client.getStringDetails(key, fallback as string)
          : kind === 'number'
            ? client.getNumberDetails(key, fallback as number)
            : client.getObjectDetails(key, fallback as JsonValue)
    const { value, variant, reason, errorCode, flagMetadata } = details
    return { value, variant, reason, errorCode, flagMetadata: { ...flagMetadata } }
  },

  /** The `flagsChanged` of every ConfigurationChanged event so far. */
  changes: () => changes,

  /** The provider status the SDK reports. */
  status: () => OpenFeature.getClient().providerStatus,
}

;(globalThis as { harness?: typeof harness }).harness = harness
