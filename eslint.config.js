import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** config/ is the only reader of the environment (docs/architecture.md#style, rule 6). */
const ENV_ONLY_IN_CONFIG = {
  selector: "MemberExpression[object.name='process'][property.name='env']",
  message: 'Only src/config reads process.env.',
};

/** Time and randomness are injected (docs/architecture.md#style, rule 7): only src/core/clock.ts and random.ts read them. */
const TIME_AND_RANDOMNESS = [
  {
    selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
    message: 'Read the time through a Clock (src/core/clock.ts), injected where it decides something.',
  },
  {
    selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
    message: 'Take randomness from src/core/random.ts.',
  },
  {
    selector: "CallExpression[callee.object.name='performance'][callee.property.name='now']",
    message: 'Read the time through a Clock (src/core/clock.ts), injected where it decides something.',
  },
];
const RANDOM_NAMES = [
  'randomBytes',
  'randomInt',
  'randomUUID',
  'getRandomValues',
  'randomFillSync',
  'randomFill',
];
const RANDOM_IMPORTS = {
  paths: ['node:crypto', 'crypto'].map((name) => ({
    name,
    importNames: RANDOM_NAMES,
    message: 'Take randomness from src/core/random.ts.',
  })),
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'bench/results/**',
      'bench/.cache/**',
      'bench/mcp-bench.mjs',
      'bench/make-workspace.sh',
      'coverage/**',
      'test-artifacts/**',
      'test/golden/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        setImmediate: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', ENV_ONLY_IN_CONFIG, ...TIME_AND_RANDOMNESS],
      'no-restricted-imports': ['error', RANDOM_IMPORTS],
    },
  },
  {
    // The two modules that read the time and randomness directly; everything else has them injected.
    files: ['src/core/clock.ts', 'src/core/random.ts'],
    rules: {
      'no-restricted-syntax': ['error', ENV_ONLY_IN_CONFIG],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The operator's console page and the MCP Apps pages run in a browser (src/console/page/, src/apps/).
    files: ['src/console/page/**', 'src/apps/**'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        document: 'readonly',
        window: 'readonly',
        navigator: 'readonly',
        EventSource: 'readonly',
        Node: 'readonly',
        btoa: 'readonly',
      },
    },
  },
  {
    files: ['src/config/**', 'test/**', 'bench/**', 'scripts/**', '*.config.*'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Tests, benchmarks and scripts make their own random data and measure time themselves.
    files: ['test/**', 'bench/**', 'scripts/**', '*.config.*'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
