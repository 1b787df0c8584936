/**
 * The credentials of both admin mounts: every accepted shape with the role it signs in with,
 * refused shapes (a clear error from the mount's own factory, never an open admin), role
 * validation and duplicate usernames.
 */
import { describe, expect, it } from 'vitest'
import { prepareCredentials, type AuthOption } from '../../src/common/credentials.js'

class BadAuth extends Error {}
const invalid = (message: string) => new BadAuth(message)
const prepare = (auth: unknown) => prepareCredentials(auth as AuthOption, invalid, 'test `auth`')

describe('prepareCredentials', () => {
  it('is open mode (null) without auth', () => {
    expect(prepare(undefined)).toBeNull()
    expect(prepare(null)).toBeNull()
  })

  it.each([
    ['a user object', { username: 'u', password: 'p' }, 'admin'],
    ['a user object with a role', { username: 'u', password: 'p', role: 'viewer' }, 'viewer'],
    ['a pair', ['u', 'p'], 'admin'],
    [
      'a list of pairs',
      [
        ['x', 'y'],
        ['u', 'p'],
      ],
      'admin',
    ],
    [
      'a list of users',
      [
        { username: 'x', password: 'y' },
        { username: 'u', password: 'p', role: 'operator' },
      ],
      'operator',
    ],
    ['a mixed list', [['x', 'y'], { username: 'u', password: 'p', role: 'viewer' }], 'viewer'],
    ['{users}', { users: [{ username: 'u', password: 'p', role: 'operator' }] }, 'operator'],
    ['{users} of pairs', { users: [['u', 'p']] }, 'admin'],
  ])('accepts %s and answers its role', async (_name, auth, role) => {
    const check = prepare(auth)!
    expect(await check.verify('u', 'p')).toBe(role)
    expect(await check.verify('u', 'wrong')).toBeNull()
    expect(await check.verify('nobody', 'p')).toBeNull()
    expect(await check.verify('', '')).toBeNull()
  })

  it('keeps each user to its own password and role', async () => {
    const check = prepare([
      { username: 'vera', password: 'one', role: 'viewer' },
      { username: 'otto', password: 'two', role: 'operator' },
    ])!
    expect(await check.verify('vera', 'one')).toBe('viewer')
    expect(await check.verify('otto', 'two')).toBe('operator')
    expect(await check.verify('vera', 'two')).toBeNull()
  })

  it('accepts authenticate functions in every form: true is an admin, {role} that role', async () => {
    const answer = (username: string, password: string) =>
      password !== 'ok'
        ? false
        : username === 'v'
          ? { role: 'viewer' as const }
          : username === 'a'
            ? true
            : null
    const backend = {
      prefix: 'ok',
      // `this` is the object the method was given on.
      authenticateUser(this: { prefix: string }, username: string, password: string) {
        return Promise.resolve(password === this.prefix ? answer(username, password) : false)
      },
    }
    for (const auth of [answer, { authenticate: answer }, backend]) {
      const check = prepare(auth)!
      expect(await check.verify('a', 'ok')).toBe('admin')
      expect(await check.verify('v', 'ok')).toBe('viewer')
      expect(await check.verify('x', 'ok')).toBeNull()
      expect(await check.verify('a', 'no')).toBeNull()
    }
  })

  it('refuses sloppy answers of an authenticate function', async () => {
    for (const result of ['yes', 1, {}, { role: 'root' }, { role: true }, [true]]) {
      const check = prepare(() => result)!
      expect(await check.verify('u', 'p'), JSON.stringify(result)).toBeNull()
    }
  })

  it.each([
    ['an empty list', []],
    ['a lone string', ['admin']],
    ['a number', 42],
    ['a string', 'admin:secret'],
    ['an empty password', ['u', '']],
    ['an empty username', { username: '', password: 'p' }],
    ['a pair in a list with an empty password', [['a', '']]],
    ['a triple', ['u', 'p', 'x']],
    ['a password that is not a string', { username: 'u', password: 1 }],
    ['users that is not a list', { users: 'x' }],
    ['an empty users list', { users: [] }],
    ['an object without users or a function', { authenticate: 'yes' }],
    ['a null entry', [null]],
  ])('refuses %s with the mount’s error', (_name, auth) => {
    expect(() => prepare(auth)).toThrow(BadAuth)
    expect(() => prepare(auth)).toThrow(/^Invalid test `auth`/)
  })

  it('refuses an unknown role, naming it and the roles there are', () => {
    expect(() => prepare([{ username: 'u', password: 'p', role: 'root' }])).toThrow(
      /unknown role "root" for the user "u"; use one of viewer, operator, admin/,
    )
    expect(() => prepare({ username: 'u', password: 'p', role: 'Admin' })).toThrow(BadAuth)
  })

  it('refuses a username listed twice, whatever the shapes', () => {
    expect(() => prepare([['u', 'p'], { username: 'u', password: 'q', role: 'viewer' }])).toThrow(
      /lists the user "u" twice/,
    )
    expect(() =>
      prepare({
        users: [
          ['a', 'b'],
          ['a', 'b'],
        ],
      }),
    ).toThrow(BadAuth)
  })
})
