// fast-check arbitraries of the hostile-input suite: hostile strings (unicode, NUL and other
// control characters, lone surrogates, huge), hostile paths (absolute, `..`, through symlinks that lead out,
// very long), and values generated from a tool's advertised inputSchema (tools/list), on and off the schema.
import fc from 'fast-check';

/* eslint-disable @typescript-eslint/no-explicit-any */

export type Json = Record<string, any>;

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const asciiChar = fc.string({ minLength: 1, maxLength: 1 });

/** Strings that tend to break things: specials, controls, NUL, unicode, lone surrogates, shell and glob syntax. */
export const SPECIAL_STRINGS = [
  '',
  ' ',
  '.',
  '..',
  '/',
  '\0',
  'a\0b',
  '\n',
  '\r\n',
  'a\nb',
  '\t',
  '\u0085',
  '\u2028',
  '\uFEFF',
  '\uFFFD',
  '\uFFFF',
  '\ud800',
  'x\udc00y',
  '😀',
  'e\u0301',
  '‮evil',
  '-',
  '--',
  '-rf',
  '--help',
  '--output=/tmp/x',
  '$(touch x)',
  '`id`',
  '; rm -rf /',
  '|',
  '%00',
  '%2e%2e%2f',
  '\\',
  '..\\..\\',
  'C:\\Windows',
  '~',
  '~root',
  '*',
  '**',
  '**/*',
  '[',
  '[z-a]',
  '(',
  '(?',
  '\\',
  'a{1,99999999}',
  '(a+)+$',
  '{',
  '}',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  'NaN',
  '__proto__',
  'constructor',
  'HEAD',
  'HEAD~99999',
  '@{-1}',
  ':/',
  '^{tree}',
];

/** Any string the suite throws at the server: specials, generated text of every kind, and big ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.oneof(loneSurrogate, asciiChar), { minLength: 1, maxLength: 12 })
      .map((a) => a.join('')),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(4_096, 65_536, 600_000), fc.constantFrom('x', 'é', '\0', '/', '\n', '😀', 'a/'))
      .map(([n, c]) => c.repeat(Math.ceil(n / c.length))),
  },
);

/**
 * Paths: inside (existing and not), absolute (inside and outside), `..` escapes, through the workspace's
 * symlinks that lead out (link-out.txt, link-out-dir), NUL, very long, and generated segment soups.
 */
export function hostilePath(ws: string, canary: string): fc.Arbitrary<string> {
  const fixed = [
    '.',
    'src/main.ts',
    'src',
    'src/deep/nested/file.txt',
    'missing.txt',
    'src/missing/deeper.txt',
    'bin.dat',
    'latin1.txt',
    'img.png',
    'crlf.txt',
    'unicode-é.txt',
    'link-inside.ts',
    'link-out.txt',
    'link-out-dir',
    'link-out-dir/secret.txt',
    'link-out-dir/sub',
    'dangling.txt',
    '.git',
    '.git/config',
    'node_modules',
    '../canary/secret.txt',
    '../canary',
    '..',
    '../..',
    '../../../../../../../etc/passwd',
    'src/../../canary/a.txt',
    'src/./../..',
    `${ws}`,
    `${ws}/src/main.ts`,
    `${ws}/../canary/secret.txt`,
    `${canary}/secret.txt`,
    `${canary}`,
    '/etc/passwd',
    '/',
    '/proc/self/environ',
    '/dev/zero',
    '//etc//passwd',
    'src/main.ts\0.png',
    '\0',
    'a/'.repeat(2100) + 'x',
    'x'.repeat(256),
    'x'.repeat(5000),
    '../'.repeat(300) + 'etc/passwd',
    'src/main.ts/',
    'src/main.ts/x',
    'src\\main.ts',
    ' src/main.ts',
    'src/main.ts ',
    '~/x',
    'file:///etc/passwd',
  ];
  const segment = fc.oneof(
    fc.constantFrom(
      '..',
      '.',
      '',
      'src',
      'deep',
      'canary',
      'link-out-dir',
      'link-inside.ts',
      'main.ts',
      'sub',
    ),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
  );
  const soup = fc
    .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 8 }))
    .map(([abs, segs]) => (abs ? '/' : '') + segs.join('/'));
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fixed) },
    { weight: 3, arbitrary: soup },
    { weight: 1, arbitrary: hostileString },
  );
}

const REVS = fc.oneof(
  fc.constantFrom(
    'HEAD',
    'HEAD~1',
    'HEAD^',
    'main',
    'main..HEAD',
    'HEAD...main',
    'no-such-ref',
    '-p',
    '--output=/tmp/pwn',
    '--exec=touch pwn',
    'HEAD:src/main.ts',
    'HEAD^{tree}',
    '@{-1}',
    ':/initial',
    '0000000000000000000000000000000000000000',
    'a'.repeat(10_000),
    'HEAD\nmain',
    'HEAD\0',
  ),
  hostileString,
);

/** Integers around a schema's bounds (advertised bounds only; the server may hold tighter ones). */
function integerArb(s: Json): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : -(2 ** 53 - 1);
  const max = typeof s.maximum === 'number' ? s.maximum : 2 ** 53 - 1;
  const edges = [min, max, 0, 1, -1, 2, 10, 100].filter((n) => n >= min && n <= max);
  const near = (lo: number, hi: number) =>
    fc.integer({ min: Math.max(min, Math.min(lo, max)), max: Math.min(max, Math.max(hi, min)) });
  // Mostly small positive values (counts and line numbers usually start at 1, the server's hidden lower
  // bounds), so later arguments get checked too; the edges and the wide range often enough to matter.
  return fc.oneof(
    { weight: 6, arbitrary: near(1, 200) },
    { weight: 2, arbitrary: fc.constantFrom(...edges) },
    { weight: 1, arbitrary: near(-(2 ** 31), 2 ** 31) },
    { weight: 1, arbitrary: near(-1000, 1000) },
  );
}

/** A value for one property, by its schema and (for strings) by what its name says it is. */
function propertyArb(name: string, s: Json, ctx: { ws: string; canary: string }): fc.Arbitrary<unknown> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerArb(s);
    case 'number':
      return fc.double({ noNaN: true });
    case 'array':
      return fc.array(propertyArb(name, s.items ?? {}, ctx), { maxLength: 6 });
    case 'object':
      if (s.additionalProperties && typeof s.additionalProperties === 'object')
        return fc.dictionary(hostileString, propertyArb(name, s.additionalProperties, ctx), { maxKeys: 5 });
      return fc.oneof(
        fc.object({ maxDepth: 3 }),
        fc.jsonValue().filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
      );
    case 'string':
      if (/path|workdir/.test(name)) return hostilePath(ctx.ws, ctx.canary);
      if (name === 'rev' || name === 'ref') return REVS;
      if (name === 'output_ref')
        return fc.oneof(
          fc
            .tuple(hostileString, fc.constantFrom('stdout', 'stderr', 'both', ''))
            .map(([id, st]) => `command:${id}:${st}`),
          hostileString,
        );
      return hostileString;
    default:
      return fc.jsonValue();
  }
}

/** On-schema arguments for a tool: required properties always, optional ones sometimes. */
export function argumentsFromSchema(schema: Json, ctx: { ws: string; canary: string }): fc.Arbitrary<Json> {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(props)) model[k] = propertyArb(k, s, ctx);
  return fc.record(model, { requiredKeys: (schema.required ?? []) as string[] }) as fc.Arbitrary<Json>;
}

/** A value that is not of JSON-schema type `type` (and not an integer for an integer). */
export function wrongType(s: Json): fc.Arbitrary<unknown> {
  const all: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', hostileString],
    ['integer', fc.integer()],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n))],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.jsonValue(), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue(), { maxKeys: 3 })],
  ];
  const type = s.type as string | undefined;
  const ok = (t: string) =>
    t === type || (type === 'number' && t === 'integer') || (type === undefined && t !== 'null');
  const choices = all.filter(([t]) => !ok(t)).map(([, a]) => a);
  const extra: Array<fc.Arbitrary<unknown>> = [];
  if (type === 'integer') {
    if (typeof s.maximum === 'number')
      extra.push(fc.integer({ min: s.maximum + 1, max: s.maximum + 1_000_000 }), fc.constant(1e300));
    if (typeof s.minimum === 'number')
      extra.push(fc.integer({ min: s.minimum - 1_000_000, max: s.minimum - 1 }), fc.constant(-1e300));
  }
  if (Array.isArray(s.enum)) extra.push(hostileString.filter((v) => !s.enum.includes(v)));
  if (type === 'array')
    extra.push(
      fc.array(fc.oneof(fc.integer(), fc.constant(null), fc.boolean()), { minLength: 1, maxLength: 3 }),
    );
  if (type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    extra.push(
      fc.dictionary(
        fc.string({ minLength: 1, maxLength: 5 }),
        fc.oneof(fc.integer(), fc.constant(null), fc.boolean()),
        { minKeys: 1, maxKeys: 3 },
      ),
    );
  return fc.oneof(...choices, ...extra);
}
