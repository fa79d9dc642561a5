import js from '@eslint/js';
import tseslint from 'typescript-eslint';

import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Layering (docs/architecture.md): cli → transport → doors → kernel, store
 * injected into the kernel. A door imports the kernel only through
 * kernel/index.ts, transport only for the surface types, and never store/,
 * cli/, web/ or another door; the kernel imports only itself, node: and zod.
 *
 * No list of doors is kept here: every folder under src/doors/ is a door, so a
 * new door is guarded the moment it exists (test/lint/boundaries.test.ts).
 */
const DOORS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), 'src', 'doors');

/** The door folder a path lies in (`src/doors/<door>/…`), or undefined. */
function doorOf(path) {
  const rel = relative(DOORS_ROOT, path);
  if (rel.startsWith('..') || rel === '') return undefined;
  const [first, ...rest] = rel.split(sep);
  return rest.length > 0 ? first : undefined;
}

/** `airlock/no-cross-door`: a door never imports another door, whatever its name. */
const noCrossDoor = {
  meta: {
    type: 'problem',
    docs: { description: 'A door never imports another door.' },
    messages: {
      crossDoor:
        "A door never imports another door ('{{from}}' imports '{{to}}'): share through the kernel barrel, or move the common part into the kernel.",
    },
    schema: [],
  },
  create(context) {
    const from = doorOf(context.filename);
    if (from === undefined) return {};
    const check = (source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const to = doorOf(resolve(dirname(context.filename), source.value));
      if (to !== undefined && to !== from) {
        context.report({ node: source, messageId: 'crossDoor', data: { from, to } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
    };
  },
};

const doorBoundaries = {
  files: ['src/doors/**/*.ts'],
  plugins: { airlock: { rules: { 'no-cross-door': noCrossDoor } } },
  rules: {
    'airlock/no-cross-door': 'error',
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
        ],
      },
    ],
  },
};

/*
 * No function over 120 lines in src/ (issue 26): a long factory closure
 * hides its parts. No file is exempt; split a function that grows past it.
 */
const functionLength = [
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': [
        'error',
        { max: 120, skipBlankLines: true, skipComments: true, IIFEs: true },
      ],
    },
  },
];

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
  doorBoundaries,
  ...functionLength,
  // The kernel's own folders (src/kernel/*.ts and one level of concern
  // folders: calls, authority, audit, writes, events) import each other;
  // nothing above src/kernel.
  ...[
    ['src/kernel/*.ts', '^\\.\\./'],
    ['src/kernel/*/*.ts', '^\\.\\./\\.\\./'],
  ].map(([files, outside]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: outside,
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
  })),
);
