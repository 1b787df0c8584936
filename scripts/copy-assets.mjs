// Copies the non-TypeScript files the code reads at run time (Lua scripts, SQL migrations,
// templates, stylesheets, the dashboards' browser scripts under static/) from src/ to dist/ (or to the folder given as the first argument,
// e.g. the compiled benchmarks' copy of src), next to the modules that load them.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs'
import process from 'node:process'
import { dirname, extname, join, relative } from 'node:path'

const targetRoot = process.argv[2] ?? 'dist'
const assetExtensions = new Set(['.lua', '.sql', '.html', '.css', '.svg'])

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (
      assetExtensions.has(extname(name)) ||
      (extname(name) === '.js' && path.split(/[\\/]/).includes('static'))
    ) {
      const target = join(targetRoot, relative('src', path))
      mkdirSync(dirname(target), { recursive: true })
      cpSync(path, target)
    }
  }
}

walk('src')
