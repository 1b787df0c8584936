import { compileErrors, validate } from '@readme/openapi-parser'

/**
 * Fails with the validator's messages unless `doc` is a valid OpenAPI 3.0/3.1 or Swagger 2.0
 * document (schema and the rules the schema cannot express: path parameters, duplicate
 * operation ids, …).
 */
export async function expectValidOpenApi(doc: object): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0])
  if (!result.valid) throw new Error(compileErrors(result))
}
