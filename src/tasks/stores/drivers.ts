/**
 * Lazy driver loading: a user of one backend installs only that backend's driver, and a
 * missing one is a clear error naming the package to install.
 */
import { StoreDriverMissingError } from './errors.js'

/** Imports `packageName`, or throws {@link StoreDriverMissingError} saying what to install. */
export async function loadDriver(packageName: string, store: string): Promise<unknown> {
  try {
    return (await import(packageName)) as unknown
  } catch (error) {
    throw new StoreDriverMissingError(
      `The ${store} task store needs the "${packageName}" package: npm install ${packageName}`,
      { package: packageName },
      { cause: error },
    )
  }
}

/** The module's default export when there is one (CommonJS drivers), else the module. */
export function defaultExport(module: unknown): unknown {
  if (typeof module === 'object' && module !== null && 'default' in module) {
    return module.default
  }
  return module
}
