// Arguments for every tool (… NUL, invalid UTF-8), the path and byte side: property-based, over real HTTP on
// 127.0.0.1. Hostile paths (absolute, `..`, through symlinks that lead out, NUL, control characters, very
// long) to every tool that takes one, each answered with the specific code of docs/tools.md#paths; invalid
// UTF-8 bytes spliced into the raw body of tools/call; the cases the properties found; and exec_command /
// write_stdin with fixed harmless commands only (never a generated one). Same checks per call as
// tool-arguments.test.ts (tool-harness.ts): specific, schema-valid, nothing logged, nothing changed.
import fc from 'fast-check';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostilePath, type Json } from './arbitraries.js';
import { callRaw, fcParams, judge, postRaw, snapshot, stillServing } from './support.js';
import { treeChanges } from '../helpers/tree-snapshot.js';
import { ALLOWED, NO_GENERATED_STRINGS, SAFE_REQUIRED, toolHarness } from './tool-harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const H = toolHarness();

/** The documented verdict on a path (docs/tools.md#paths): `..` resolved lexically, then the real path. */
function pathVerdict(
  p: string,
): 'INVALID_ARGUMENT' | 'PATH_OUTSIDE_WORKSPACE' | 'SYMLINK_ESCAPE' | 'DANGLING' | undefined {
  if (p === '' || p.includes('\0') || /\p{Cs}/u.test(p)) return 'INVALID_ARGUMENT';
  const abs = path.resolve(H.L.ws, p);
  const inside = (x: string) => x === H.L.ws || x.startsWith(H.L.ws + '/');
  if (!inside(abs)) return 'PATH_OUTSIDE_WORKSPACE';
  // Through a workspace symlink that leads out (the only ones are link-out.txt and link-out-dir).
  const rel = path.relative(H.L.ws, abs).split('/');
  if (rel[0] === 'link-out.txt' || rel[0] === 'link-out-dir') return 'SYMLINK_ESCAPE';
  // A dangling link to a missing file outside: NOT_FOUND or SYMLINK_ESCAPE are both specific and true.
  if (rel[0] === 'dangling.txt') return 'DANGLING';
  return undefined;
}

describe('hostile paths for every tool that takes one (docs/tools.md#paths)', () => {
  const PATH_TOOLS: Array<[string, string, Record<string, unknown>]> = [
    ['read_file', 'path', {}],
    ['list_dir', 'path', {}],
    ['list_files', 'path', {}],
    ['search_text', 'path', { query: 'main' }],
    ['view_image', 'path', {}],
    ['git_status', 'path', {}],
    ['git_diff', 'path', {}],
    ['git_log', 'path', {}],
    ['git_blame', 'path', {}],
    // old_string is in no file: whatever the path, edit_file never writes (the workspace must not change).
    ['edit_file', 'path', { old_string: 'text that is in no file', new_string: 'x' }],
    // workdir only: the command is fixed and harmless.
    ['exec_command', 'workdir', { cmd: 'true', yield_time_ms: 5000 }],
  ];

  it('outside (absolute, `..`, through symlinks), NUL, empty: the specific code; inside: never an escape code', async () => {
    const arb = fc.tuple(fc.constantFrom(...PATH_TOOLS), hostilePath(H.L.ws, H.L.canary));
    await fc.assert(
      fc.asyncProperty(arb, async ([[name, arg, rest], p]) => {
        const args = { ...rest, [arg]: p };
        const { v, r } = await H.checkedCall(name, args);
        const expected = pathVerdict(p);
        const label = `${name} ${arg}=${JSON.stringify(p).slice(0, 200)}: ${r.text.slice(0, 300)}`;
        if (expected === 'PATH_OUTSIDE_WORKSPACE' || expected === 'SYMLINK_ESCAPE') {
          // A name too long for the file system may be refused first, with its own specific code.
          if (p.length > 4000 || p.split('/').some((seg) => Buffer.byteLength(seg) > 255))
            expect(v, label).toMatchObject({ kind: 'tool' });
          // Control characters may be refused before the path is resolved (git tools do): INVALID_ARGUMENT.
          else if ([...p].some((c) => c.charCodeAt(0) < 0x20 || c === '\x7f'))
            expect([expected, 'INVALID_ARGUMENT'], label).toContain((v as any).code);
          else expect(v, label).toMatchObject({ kind: 'tool', code: expected });
        } else if (expected === 'INVALID_ARGUMENT') {
          expect(v, label).toMatchObject({ kind: 'tool', code: 'INVALID_ARGUMENT' });
        } else if (v.kind === 'tool' && expected === undefined) {
          expect(['PATH_OUTSIDE_WORKSPACE', 'SYMLINK_ESCAPE'], label).not.toContain(v.code);
        }
        if (v.kind === 'ok' && name === 'exec_command')
          expect(v.result.structuredContent.exit_code, label).toBe(0);
      }),
      fcParams(150),
    );
    await stillServing(H.srv.url);
  });

  it('git_diff and git_show `paths` items that leave the workspace are refused, never read', async () => {
    const arb = fc.tuple(
      fc.constantFrom('git_diff', 'git_show'),
      fc.array(hostilePath(H.L.ws, H.L.canary), { minLength: 1, maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([name, paths]) => {
        const { v, r } = await H.checkedCall(name, { paths });
        const outside = paths.some((p) => pathVerdict(p) === 'PATH_OUTSIDE_WORKSPACE');
        if (outside)
          expect(v.kind, `${name} ${JSON.stringify(paths).slice(0, 200)}: ${r.text.slice(0, 300)}`).toBe(
            'tool',
          );
        // Nothing of the canary is ever shown.
        expect(r.text).not.toContain('canary secret');
      }),
      fcParams(100),
    );
    await stillServing(H.srv.url);
  });
});

describe('invalid UTF-8 bytes in the raw body of tools/call', () => {
  const SEQUENCES = [
    [0xff],
    [0xfe, 0xff],
    [0xc0, 0x80], // overlong NUL
    [0xc0, 0xaf], // overlong '/'
    [0xe0, 0x80, 0xaf],
    [0xed, 0xa0, 0x80], // an encoded surrogate
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0x80],
    [0xc3],
    [0xe2, 0x82],
  ].map((b) => Buffer.from(b));

  it('bytes spliced into string arguments → a result or a specific error; the body is never fatal', async () => {
    const names = H.tools.map((t) => t.name).filter((n) => !NO_GENERATED_STRINGS.has(n));
    const arb = fc.tuple(
      fc.constantFrom(...names),
      fc.array(fc.constantFrom(...SEQUENCES), { minLength: 1, maxLength: 4 }),
      fc.constantFrom('path', 'query', 'patch', 'rev', 'output_ref', 'command_id'),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ([name, seqs, field]) => {
        const t = H.tool(name);
        const props = (t.inputSchema.properties ?? {}) as Record<string, Json>;
        const required = (t.inputSchema.required ?? []) as string[];
        const args: Record<string, unknown> = Object.fromEntries(required.map((k) => [k, SAFE_REQUIRED[k]]));
        const key = field in props && props[field]?.type === 'string' ? field : required[0];
        const before = { ws: snapshot(H.L.ws), canary: snapshot(H.L.canary) };
        let body: Buffer;
        if (key === undefined)
          body = Buffer.from(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 7,
              method: 'tools/call',
              params: { name, arguments: { ['@@BAD@@']: 1 } },
            }),
          );
        else {
          args[key] = 'src/@@BAD@@';
          body = Buffer.from(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 7,
              method: 'tools/call',
              params: { name, arguments: args },
            }),
          );
        }
        const at = body.indexOf('@@BAD@@');
        body = Buffer.concat([body.subarray(0, at), ...seqs, body.subarray(at + 7)]);
        const label = `${name}.${key} with bytes ${seqs.map((s) => s.toString('hex')).join(' ')}`;
        const r = await postRaw(H.srv.url, body);
        const v = judge(r, label);
        expect(H.srv.takeErrors(), label).toEqual([]);
        if (v.kind === 'rpc') expect(v.code, label).toBe(-32700);
        if (v.kind === 'tool') expect(ALLOWED[name], `${label}: ${r.text.slice(0, 300)}`).toContain(v.code);
        expect(treeChanges(before.canary, snapshot(H.L.canary)), label).toEqual([]);
        expect(treeChanges(before.ws, snapshot(H.L.ws)), label).toEqual([]);
      }),
      fcParams(100),
    );
    await stillServing(H.srv.url);
  });
});

describe('cases the properties found (each was INTERNAL_ERROR or a wrong answer before its fix)', () => {
  const cases: Array<[string, string, Record<string, unknown>, string]> = [
    // A NUL cannot be passed to ripgrep in argv (spawn threw a TypeError).
    ['search_text query with NUL', 'search_text', { query: '\0' }, 'INVALID_ARGUMENT'],
    [
      'search_text glob with NUL',
      'search_text',
      { query: 'main', include_globs: ['a\0b'] },
      'INVALID_ARGUMENT',
    ],
    [
      'search_text exclude_globs ["/"]',
      'search_text',
      { query: 'main', exclude_globs: ['/'] },
      'INVALID_ARGUMENT',
    ],
    // picomatch threw on a pattern that is empty once normalised, and on one too long to compile.
    ['list_files exclude_patterns ["/"]', 'list_files', { exclude_patterns: ['/'] }, 'INVALID_ARGUMENT'],
    ['list_files patterns ["./"]', 'list_files', { patterns: ['./'] }, 'INVALID_ARGUMENT'],
    [
      'list_files a 600,000-character pattern',
      'list_files',
      { patterns: ['x'.repeat(600_000)] },
      'INVALID_ARGUMENT',
    ],
    // V8 compiles a regular expression lazily: this one compiled and then threw "too large" while walking.
    [
      'list_files a 65,536-character pattern',
      'list_files',
      { patterns: ['x'.repeat(65_536)] },
      'INVALID_ARGUMENT',
    ],
    [
      'search_text a 65,536-character glob',
      'search_text',
      { query: 'main', glob: 'x'.repeat(65_536) },
      'INVALID_ARGUMENT',
    ],
    // One argv string over 128 KiB: spawning ripgrep failed with E2BIG (INTERNAL_ERROR).
    ['search_text a 600 KB query', 'search_text', { query: 'x'.repeat(600_000) }, 'INVALID_ARGUMENT'],
    [
      'search_text a 200 KB regex',
      'search_text',
      { query: 'x'.repeat(200_000), regex: true },
      'INVALID_ARGUMENT',
    ],
    [
      'search_text a blank exclude glob of 600,000 newlines',
      'search_text',
      { query: '0', exclude_globs: ['\n'.repeat(600_000)] },
      'INVALID_ARGUMENT',
    ],
    [
      'search_text 50 globs of 60,000 characters',
      'search_text',
      { query: 'main', include_globs: Array(50).fill('y'.repeat(60_000)) },
      'INVALID_ARGUMENT',
    ],
    // A 600 KB path of 300,000 components: finding its nearest existing parent was quadratic and blocked the
    // server's event loop for minutes (every tool that takes a path).
    ['read_file a 600 KB path', 'read_file', { path: `${'a/'.repeat(300_000)}x` }, 'INVALID_ARGUMENT'],
    [
      'git_show a 600 KB path in paths',
      'git_show',
      { paths: [`${'a/'.repeat(300_000)}x`] },
      'INVALID_ARGUMENT',
    ],
    // A lone surrogate became U+FFFD on disk: the file created was not the one asked for and reported.
    [
      'apply_patch Add File with a lone surrogate',
      'apply_patch',
      { patch: '*** Begin Patch\n*** Add File: new/a\udd06.txt\n+x\n*** End Patch\n' },
      'INVALID_ARGUMENT',
    ],
    [
      'read_file a path with a lone surrogate',
      'read_file',
      { path: 'src/\ud800main.ts' },
      'INVALID_ARGUMENT',
    ],
    // dry_run passed an Add whose 300-byte name no file system can hold (its parent did not exist yet).
    [
      'apply_patch dry_run, a 300-byte name under a new directory',
      'apply_patch',
      {
        patch: `*** Begin Patch\n*** Add File: new/${'x'.repeat(300)}.txt\n+x\n*** End Patch\n`,
        dry_run: true,
      },
      'INVALID_ARGUMENT',
    ],
    [
      'read_file a 300-byte name under a missing directory',
      'read_file',
      { path: `missing/${'é'.repeat(150)}` },
      'INVALID_ARGUMENT',
    ],
  ];
  for (const [title, name, args, code] of cases) {
    it(title, async () => {
      const { v } = await H.checkedCall(name, args);
      expect(v).toEqual({ kind: 'tool', code });
    });
  }
});

// An environment too large for execve (one string over 128 KiB, or all of them over ARG_MAX) is refused up front
// (INVALID_ARGUMENT naming env); a spawn that E2BIG refuses anyway is a failed start, and the helper stays up.
describe('exec_command with an environment over the execve limits', () => {
  it.each([
    ['a 600 KB env value', { cmd: 'true', env: { K: 'v'.repeat(600_000) } }],
    ['a 200 KB env name', { cmd: 'true', env: { ['K'.repeat(200_000)]: 'v' } }],
  ])('%s → a specific answer, not INTERNAL_ERROR or "terminated"', async (_title, args) => {
    H.srv.takeErrors();
    const r = await callRaw(H.srv.url, 'exec_command', args);
    expect(H.srv.takeErrors()).toEqual([]);
    const v = judge(r, 'exec_command huge env');
    const sc = r.json.result.structuredContent;
    expect(v.kind === 'tool' ? v.code : sc.status, r.text.slice(0, 300)).toMatch(
      /^(INVALID_ARGUMENT|failed)$/,
    );
  });
});

describe('exec_command and write_stdin with fixed commands (never a generated one)', () => {
  it('fixed harmless commands with hostile but non-executable surroundings answer specifically', async () => {
    const cases: Array<[string, Record<string, unknown>, string | 'ok']> = [
      [
        'exec_command',
        { cmd: 'printf "%s" "$X"', env: { X: 'é\u0000?' }, yield_time_ms: 5000 },
        'INVALID_ARGUMENT',
      ],
      ['exec_command', { cmd: 'printf "%s" "$X"', env: { X: 'é\ud800😀' }, yield_time_ms: 5000 }, 'ok'],
      ['exec_command', { cmd: 'true', workdir: '../canary' }, 'PATH_OUTSIDE_WORKSPACE'],
      ['exec_command', { cmd: 'true', workdir: 'link-out-dir' }, 'SYMLINK_ESCAPE'],
      ['exec_command', { cmd: 'true', workdir: 'src/main.ts' }, 'NOT_A_DIRECTORY'],
      ['exec_command', { cmd: 'true', workdir: 'a\0b' }, 'INVALID_ARGUMENT'],
      ['exec_command', { cmd: '', yield_time_ms: 1000 }, 'INVALID_ARGUMENT'],
      ['exec_command', { cmd: 'true', env: { LD_PRELOAD: '/tmp/x.so' } }, 'PERMISSION_REQUIRED'],
      [
        'exec_command',
        { cmd: 'cat', stdin: 'x'.repeat(1_000_000), yield_time_ms: 10000, max_output_bytes: 1024 },
        'ok',
      ],
      ['exec_command', { cmd: 'echo "\ud800 \u0000 😀"', yield_time_ms: 5000 }, 'INVALID_ARGUMENT'],
      ['exec_command', { cmd: 'echo "\ud800 😀 \u0085"', yield_time_ms: 5000 }, 'ok'],
      ['write_stdin', { command_id: 'no-such-command', chars: '' }, 'COMMAND_NOT_FOUND'],
      ['write_stdin', { command_id: '../../etc/passwd', chars: 'x' }, 'COMMAND_NOT_FOUND'],
      ['write_stdin', { command_id: '\0', chars: '\u0003' }, 'COMMAND_NOT_FOUND'],
      ['write_stdin', { command_id: 'x'.repeat(100_000), chars: '' }, 'COMMAND_NOT_FOUND'],
    ];
    for (const [name, args, want] of cases) {
      H.srv.takeErrors();
      const r = await callRaw(H.srv.url, name, args);
      const label = `${name} ${JSON.stringify(args).slice(0, 200)}: ${r.text.slice(0, 400)}`;
      const v = judge(r, label);
      expect(H.srv.takeErrors(), label).toEqual([]);
      if (want === 'ok') expect(v.kind, label).toBe('ok');
      else if (want === 'INVALID_ARGUMENT' || want === 'COMMAND_NOT_FOUND')
        expect(['INVALID_ARGUMENT', 'COMMAND_NOT_FOUND'], label).toContain((v as any).code);
      else expect(v, label).toMatchObject({ kind: 'tool', code: want });
    }
    await stillServing(H.srv.url);
  });
});
