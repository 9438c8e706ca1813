import tseslint from 'typescript-eslint';

/**
 * The layers that run in browsers too (issue #13): they reach the runtime only through
 * `src/platform/` (whose Node half lives in `src/platform/node/`). The stdio transport spawns a
 * child process and is Node-only by nature, as is reading the user's Codex setup; `execrx/browser`
 * exports neither.
 */
const ISOMORPHIC = [
  'src/protocol/**',
  'src/noise/**',
  'src/relay/**',
  'src/registry/**',
  'src/transport/**',
  'src/rpc/**',
  'src/client/**',
  'src/environment/**',
  'src/platform/*.ts',
  'src/platform/browser/**',
  'src/platform/noble/**',
  'src/browser.ts',
];
const NODE_ONLY_IN_ISOMORPHIC = [
  'src/transport/stdioTransport.ts',
  // The user's Codex setup: files, variables and stdio executors (exported from `execrx` only).
  'src/environment/codexSetup.ts',
  'src/environment/environmentsToml.ts',
  'src/environment/singleSessionEnvironment.ts',
];
const RUNTIME_SEAM = 'use src/platform/ (the platform seam): this layer also runs in browsers';
/** esbuild cannot trim zod's namespace object: one named `z` anywhere keeps all of zod in a bundle. */
const ZOD_NAMESPACE_IMPORT = {
  selector:
    "ImportDeclaration[source.value='zod'][importKind!='type'] > ImportSpecifier[imported.name='z'][importKind!='type']",
  message:
    "import * as z from 'zod': the named `z` pulls all of zod into the browser bundle and the CLI's (bench/browser-bundle.ts, scripts/bundle-cli.mjs)",
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'spec/relay/protobuf/gen/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ZOD_NAMESPACE_IMPORT] },
  },
  {
    files: ISOMORPHIC,
    ignores: NODE_ONLY_IN_ISOMORPHIC,
    rules: {
      'no-restricted-syntax': [
        'error',
        ZOD_NAMESPACE_IMPORT,
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'ws', message: RUNTIME_SEAM }],
          patterns: [
            { group: ['node:*'], message: RUNTIME_SEAM },
            {
              group: ['buffer', 'crypto', 'child_process', 'fs', 'http', 'https', 'net', 'os', 'path', 'stream', 'util', 'events', 'url'],
              message: RUNTIME_SEAM,
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: RUNTIME_SEAM },
        { name: 'process', message: RUNTIME_SEAM },
        { name: 'setImmediate', message: RUNTIME_SEAM },
      ],
    },
  },
);
