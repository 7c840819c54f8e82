import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only src/config reads process.env.',
        },
      ],
    },
  },
  {
    // The operator's console page runs in a browser (src/console/page/).
    files: ['src/console/page/**'],
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
);
