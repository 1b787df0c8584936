// @ts-check
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/** Modules that the framework-free layers must never import. */
const frameworkAndDrivers = [
  'fastify',
  'fastify-plugin',
  '@fastify/*',
  'ioredis',
  'pg',
  'mysql2',
  'mysql2/*',
  'better-sqlite3',
  'kysely',
]

/** A relative import of one of `folders` of `src/`, from any depth. */
const folder = (...folders) => String.raw`^(\.\./)+(${folders.join('|')})(/|\.js$)`

/**
 * The layers, bottom up (docs/architecture.md):
 *
 *   common   — shared by both halves; imports neither
 *   core     — the engine's kernel; knows the features and the store ports by type only
 *   stores   — the state store's ports and backends
 *   flags, rate-limit — the engine's features: core, common, the store ports and the record
 *                feed, never a store backend or each other
 *   create-engine, fastify, admin, cli, server, demo — adapters on top
 *   ui       — the dashboards' shared layout and assets: common only, used by admin and tasks
 *
 * Tasks never import route control, and route control never imports tasks.
 */
const layer = ({ forbidden = [], typesOnly = [], drivers = frameworkAndDrivers, message }) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      patterns: [
        ...drivers.map((group) => ({
          group: [group],
          message: 'This layer must stay free of Fastify and database drivers.',
        })),
        ...(forbidden.length === 0 ? [] : [{ regex: folder(...forbidden), message }]),
        ...(typesOnly.length === 0
          ? []
          : [{ regex: folder(...typesOnly), allowTypeImports: true, message }]),
      ],
    },
  ],
})

const adapters = ['fastify', 'admin', 'cli', 'server', 'demo', 'create-engine']

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'bench/.out/**',
      '.tmp/**',
      'drill/.out/**',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': [
        'error',
        { allowConstantLoopConditions: true },
      ],
    },
  },
  {
    // Every part logs through a pino-compatible logger (src/common/logger.ts); only the CLI
    // prints, its output being the user interface.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/cli/**'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['src/common/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: folder('core', 'stores', 'flags', 'rate-limit', 'tasks', 'ui', ...adapters),
              message: 'src/common is shared by both halves and imports neither.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**'],
    rules: layer({
      forbidden: ['tasks', 'ui', ...adapters],
      typesOnly: ['stores', 'flags', 'rate-limit'],
      message:
        'core is the kernel: it knows the store ports and the features by type only, and never an adapter (createEngine builds the engine from them).',
    }),
  },
  {
    files: ['src/stores/**'],
    rules: layer({
      // The Redis backend's connection code names the driver's types (it loads it lazily).
      drivers: frameworkAndDrivers.filter((name) => name !== 'ioredis'),
      forbidden: ['tasks', 'flags', 'rate-limit', 'ui', ...adapters],
      message:
        'The state store implements the ports of core; features build on it, not it on them.',
    }),
  },
  {
    files: ['src/flags/**'],
    rules: layer({
      forbidden: ['tasks', 'rate-limit', 'ui', ...adapters, 'stores/(memory|file|redis|index)'],
      message:
        'A feature builds on core, common and the store ports (stores/types, stores/record-feed), never on a store backend, another feature or an adapter.',
    }),
  },
  {
    files: ['src/rate-limit/**'],
    rules: layer({
      forbidden: ['tasks', 'flags', 'ui', ...adapters, 'stores/(memory|file|redis|index)'],
      message:
        'A feature builds on core, common and the store ports (stores/types, stores/record-feed), never on a store backend, another feature or an adapter.',
    }),
  },
  // The task half may import itself, src/common and src/ui (the dashboards' shared layout): at
  // every folder depth, an import that climbs out of src/tasks must land in one of those two.
  ...[0, 1, 2, 3, 4].map((depth) => ({
    files: [`src/tasks/${'*/'.repeat(depth)}*.{ts,tsx}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: String.raw`^(\.\./){${depth + 1}}(?!(common|ui)(/|\.js$))`,
              message: 'The task half must not import route control (only src/common and src/ui).',
            },
          ],
        },
      ],
    },
  })),
  {
    // Kysely loads when the first SQL store opens (src/tasks/stores/sql/kysely.ts), so importing
    // the task entry points costs none of it: elsewhere only its types may be imported.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/tasks/stores/sql/kysely.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='kysely'][importKind!='type']:has(ImportSpecifier[importKind!='type'])",
          message: "Import Kysely's values through src/tasks/stores/sql/kysely.js (loaded on use).",
        },
      ],
    },
  },
  {
    files: ['src/ui/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: folder('core', 'rate-limit', 'flags', 'stores', 'tasks', ...adapters),
              message:
                'src/ui is shared by both dashboards: it may import src/common, never route control or tasks.',
            },
          ],
        },
      ],
    },
  },
  {
    // The dashboards' browser script: plain JavaScript run by the page, next to htmx.
    files: ['src/ui/static/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        htmx: 'readonly',
        sessionStorage: 'readonly',
        setTimeout: 'readonly',
        setInterval: 'readonly',
        Intl: 'readonly',
        EventSource: 'readonly',
        fetch: 'readonly',
        encodeURIComponent: 'readonly',
      },
    },
  },
  {
    files: ['test/**', 'bench/**', 'drill/**', 'examples/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
)
