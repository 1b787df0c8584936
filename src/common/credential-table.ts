/**
 * A fixed table of username/password pairs, checked in constant time.
 *
 * Why hashes are compared: `timingSafeEqual` needs equal lengths, and comparing the raw
 * strings would leak a password's length. SHA-256 digests always have 32 bytes, and every pair
 * is checked, so the time a check takes says nothing about the password or about which
 * usernames exist.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/** Returns the check of `pairs`: true when the username and password match one of them. */
export function credentialTable(
  pairs: readonly { username: string; password: string }[],
): (username: string, password: string) => boolean {
  const table = pairs.map((pair) => ({
    username: digest(pair.username),
    password: digest(pair.password),
  }))
  return (username, password) => {
    const name = digest(username)
    const secret = digest(password)
    let accepted = false
    for (const user of table) {
      // Both comparisons always run, for every pair: constant time in what is compared.
      const nameMatches = timingSafeEqual(user.username, name)
      const passwordMatches = timingSafeEqual(user.password, secret)
      if (nameMatches && passwordMatches) accepted = true
    }
    return accepted
  }
}
