/**
 * The authorization matrix of both admin apps: every route from Fastify's route table, every
 * method, with path parameters naming objects that exist, × each principal; what each
 * principal must get follows from the route's own configuration (drill/lib/authorization-matrix.ts).
 * Every refusal leaves every observable state as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAdmins, type Admins } from '../../drill/lib/admins.js'
import {
  adminPrincipals,
  runMatrix,
  taskPrincipals,
  type MatrixResult,
} from '../../drill/lib/authorization-matrix.js'

let admins: Admins
beforeAll(async () => {
  admins = await startAdmins()
})
afterAll(async () => {
  await admins.close()
})

function summary(result: MatrixResult) {
  return {
    mismatches: result.mismatches,
    writesNotApplied: result.writesNotApplied,
    stateChanges: result.stateChanges,
  }
}

describe('authorization matrix', () => {
  it('route-control admin: every route × {none, viewer, operator, admin, evaluation key}', async () => {
    const result = await runMatrix(admins, 'admin', await adminPrincipals(admins))
    expect(summary(result)).toEqual({ mismatches: [], writesNotApplied: [], stateChanges: 0 })
    console.log(result.requests, [...result.tally])
  }, 60_000)

  it('task admin: every route × {none, admin session}', async () => {
    const result = await runMatrix(admins, 'tasks', await taskPrincipals(admins))
    expect(summary(result)).toEqual({ mismatches: [], writesNotApplied: [], stateChanges: 0 })
    console.log(result.requests, [...result.tally])
  }, 60_000)
})
