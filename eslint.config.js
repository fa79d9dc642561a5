import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Layering (docs/architecture.md): cli → transport → doors → kernel, store
 * injected into the kernel. A door imports the kernel only through
 * kernel/index.ts, transport only for the surface types, and never store/,
 * cli/, web/ or another door; the kernel imports only itself, node: and zod.
 */
const DOORS = ['scene', 'notes', 'openapi', 'page', 'testing'];
const doorBoundaries = DOORS.map((door) => ({
  files: [`src/doors/${door}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: '(^|/)(store|cli|web)/',
            message:
              'A door never imports store/, cli/ or web/: take what it needs from the door context (src/doors/context.ts), which the composition root fills.',
          },
          {
            regex: '(^|/)transport/(?!surface\\.js$)',
            message:
              'A door never imports transport/ at run time: describe its MCP and HTTP surfaces with the types of transport/surface.ts.',
          },
          {
            regex: '(^|/)transport/surface\\.js$',
            allowTypeImports: true,
            message: 'A door imports only types from transport/surface.ts (import type { … }).',
          },
          {
            regex: '(^|/)kernel/(?!index\\.js$)',
            message: 'A door imports the kernel only through its public surface, kernel/index.js.',
          },
          {
            regex: `(^|/)doors/(${DOORS.filter((d) => d !== door).join('|')})/|^\\.\\./(\\.\\./)*(${DOORS.filter((d) => d !== door).join('|')})/`,
            message: 'A door never imports another door.',
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'process',
          'console',
          'Buffer',
          'URL',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'fetch',
          'AbortController',
          'TextDecoder',
          'performance',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: { 'no-console': 'error' },
  },
  ...doorBoundaries,
  {
    files: ['src/kernel/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./',
              message:
                'The kernel knows nothing of HTTP, SQL or any door: it imports only its own modules, node: and zod.',
            },
            {
              regex: '^(?!node:|zod$|zod/|\\.\\.?/)',
              message: 'The kernel imports only its own modules, node: modules and zod.',
            },
          ],
        },
      ],
    },
  },
);
