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
  // The task half may import itself and src/common only: at every folder depth, an import
  // that climbs out of src/tasks must land in src/common.
  ...[0, 1, 2, 3].map((depth) => ({
    files: [`src/tasks/${'*/'.repeat(depth)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [`${'../'.repeat(depth + 1)}*`, `!${'../'.repeat(depth + 1)}common`],
              message: 'The task half must not import route control (only src/common).',
            },
          ],
        },
      ],
    },
  })),
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
)
