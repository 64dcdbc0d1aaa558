// Layering is enforced here, as VS Code does with its own rule:
//  - only electron/main and electron/preload may import `electron`;
//  - electron/core, server and cli are plain Node;
//  - the renderer imports nothing from electron/ and no Node built-ins;
//  - shared/ is runtime-neutral: no Node built-ins, no electron, no DOM-only code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import { builtinModules } from 'node:module';

// `import { z }` keeps all of zod in a bundle (its 64 locales too: 0.75 MB that every `amw`
// start parses); `import * as z` lets esbuild keep only what is used.
const namespaceZod = {
  selector: "ImportDeclaration[source.value='zod'] > ImportSpecifier[imported.name='z']",
  message: "import * as z from 'zod': the named z keeps all of zod in every bundle.",
};

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const noElectron = {
  name: 'electron',
  message:
    'Only electron/main and electron/preload may import electron; put behaviour in electron/core.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'test-results/**',
      'playwright-report/**',
      'resources/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-imports': ['error', { paths: [noElectron] }],
      'no-restricted-syntax': ['error', namespaceZod],
      'no-console': 'off',
    },
  },
  {
    files: ['electron/main/**', 'electron/preload/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  // the `amw` entry is CommonJS (bin/package.json): one-shot commands start without Node's
  // ES-module loader
  {
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['electron/main/**'],
    rules: {
      // One allow-listed opener (security.ts) is the only way out of the app.
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='openExternal']",
          message: 'Use openExternalSafe() from security.ts.',
        },
        namespaceZod,
      ],
    },
  },
  {
    files: ['electron/main/security.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          paths: [
            noElectron,
            ...nodeBuiltins.map((name) => ({
              name,
              message: 'The renderer runs in a browser: no Node built-ins.',
            })),
          ],
          patterns: [
            {
              group: ['**/electron/**', '../electron/*', '../../electron/*'],
              message: 'The renderer talks to the engine only through shared/ and its transport.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    ignores: ['shared/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            noElectron,
            ...nodeBuiltins.map((name) => ({
              name,
              message: 'shared/ runs on both sides: no Node built-ins.',
            })),
          ],
          patterns: [
            {
              group: ['**/electron/**', '**/renderer/**'],
              message: 'shared/ depends on nothing in the app.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', 'tests/**', 'e2e/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
