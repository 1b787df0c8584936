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

/**
 * Layering rule: core, rate-limit and flags are framework-free (no Fastify, no drivers, no admin app);
 * tasks never import route control, and route control never imports tasks.
 */
const restrict = (patterns, groups) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        ...groups,
        ...patterns.map((group) => ({
          group: [group],
          message: 'This layer must stay free of Fastify, database drivers and the admin app.',
        })),
      ],
    },
  ],
})

/** The modules of route control (the half the task half and the shared UI must not import). */
const routeControl = [
  '**/core/**',
  '**/rate-limit/**',
  '**/flags/**',
  '**/fastify/**',
  '**/admin/**',
  '**/stores/**',
  '**/server/**',
  '**/cli/**',
]

/** A rule forbidding imports that match `groups`, with one message. */
const forbid = (groups, message) => ({
  'no-restricted-imports': ['error', { patterns: [{ group: groups, message }] }],
})

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'bench/.out/**',
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
    files: ['src/core/**', 'src/rate-limit/**', 'src/flags/**'],
    rules: restrict(frameworkAndDrivers, [
      {
        group: [
          '**/fastify/**',
          '**/admin/**',
          '**/cli/**',
          '**/server/**',
          '**/stores/redis*',
          '**/stores/file*',
        ],
        message: 'core, rate-limit and flags must not depend on adapters, stores or the admin app.',
      },
      { group: ['**/tasks/**'], message: 'Route control and tasks are separate halves.' },
    ]),
  },
  {
    files: ['src/tasks/**'],
    rules: forbid(routeControl, 'The task half must not import route control.'),
  },
  {
    files: ['src/ui/**'],
    rules: forbid(
      [...routeControl, '**/demo/**', '**/tasks/**'],
      'src/ui is shared by both dashboards: it may import src/common, never route control or tasks.',
    ),
  },
  {
    files: ['test/**', 'bench/**', 'examples/**'],
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
)
