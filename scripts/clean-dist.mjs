// Empties dist/ before a build: tsc only adds and overwrites, so a module deleted or renamed in
// src/ (or a kind of file the build no longer emits) would otherwise linger in dist/ and ship.
import { rmSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
