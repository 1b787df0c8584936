// Copies the non-TypeScript files the code reads at run time (Lua scripts, SQL migrations,
// templates, stylesheets) from src/ to dist/, next to the modules that load them.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs'
import { dirname, extname, join, relative } from 'node:path'

const assetExtensions = new Set(['.lua', '.sql', '.html', '.css', '.svg'])

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (assetExtensions.has(extname(name))) {
      const target = join('dist', relative('src', path))
      mkdirSync(dirname(target), { recursive: true })
      cpSync(path, target)
    }
  }
}

walk('src')
