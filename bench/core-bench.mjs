// The core targets, measured with the shared load harness (bench/mcp-bench.mjs) against the built server on
// the ~9 k-file benchmark repository, with the node:http floor and rg in the same run:
//   tools/list p50 ≤ 2× floor; ≥ 4000 tools/list/s at concurrency 8; read_file 4 KB p50 ≤ 0.4 ms;
//   search_text ≤ 1.1× rg; 1 MiB read via next_action ≤ 20 ms; RSS ≤ 100 MB.
// Usage: node bench/core-bench.mjs [--duration S] [--runs N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { BENCH_DIR, benchWorkspace, ensureBuilt, round, startServer, writeResults } from './lib.mjs';

/** The harness compares against `rg` on PATH: put the bundled binary (the one the server uses) first. */
function rgDir() {
  const req = createRequire(import.meta.url);
  return path.dirname(req.resolve(`@vscode/ripgrep-${process.platform}-${process.arch}/bin/rg`));
}

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    runs: { type: 'string', default: '3' },
    // Recompute the tables from a harness JSON written earlier, without measuring again.
    from: { type: 'string' },
  },
});
const out = values.from ?? path.join(mkdtempSync(path.join(tmpdir(), 'wb-bench-')), 'core.json');
if (!values.from) await measure(out);

async function measure(out) {
  ensureBuilt();
  const ws = benchWorkspace();
  const srv = await startServer(ws);
  try {
    const r = spawnSync(
      process.execPath,
      [
        path.join(BENCH_DIR, 'mcp-bench.mjs'),
        '--base-url',
        srv.base,
        '--token',
        srv.token,
        '--workspace',
        ws,
        '--pid',
        String(srv.pid),
        '--era',
        'both',
        '--scenarios',
        'ping,read_small,read_large,search',
        '--concurrency',
        '1,8',
        '--duration',
        values.duration,
        '--runs',
        values.runs,
        '--floor',
        '--compare-search',
        '--search-query',
        'isValid',
        '--quiet',
        '--out',
        out,
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, PATH: `${rgDir()}:${process.env.PATH}` },
      },
    );
    if (r.status !== 0) throw new Error('mcp-bench failed');
  } finally {
    await srv.stop();
  }
}
const data = JSON.parse(readFileSync(out, 'utf8'));
const rows = data.summary;
const find = (target, label, c, era) =>
  rows.find(
    (x) =>
      x.target === target && x.label === label && x.concurrency === c && (era === undefined || x.era === era),
  );
const floor1 = find('node-http-floor', 'floor_keepalive', 1);
const targets = [];
for (const era of ['handshake', 'modern']) {
  const p = find('server', 'ping', 1, era);
  const why =
    `server CPU ${round(p.server_cpu_ms_per_op)} ms/op (floor ${round(floor1.server_cpu_ms_per_op)}); ` +
    `harness CPU ${round(p.client_cpu_ms_per_op)} ms/op (floor ${round(floor1.client_cpu_ms_per_op)}) parsing ${round(p.kb_per_op, 1)} KB`;
  targets.push({
    target: `tools/list p50 vs node:http floor (${era})`,
    measured: round(p.p50 / floor1.p50, 2),
    limit: 2,
    unit: '×',
    pass: p.p50 / floor1.p50 <= 2,
    note: `${round(p.p50)} ms vs floor ${round(floor1.p50)} ms; ${why}`,
  });
  const p8 = find('server', 'ping', 8, era);
  targets.push({
    target: `tools/list throughput at concurrency 8 (${era})`,
    measured: Math.round(p8.ops_per_s),
    op: '≥',
    limit: 4000,
    unit: '/s',
    pass: p8.ops_per_s >= 4000,
    note: `floor ${Math.round(find('node-http-floor', 'floor_keepalive', 8).ops_per_s)}/s`,
  });
  const rs = find('server', 'read_small', 1, era);
  targets.push({
    target: `read_file 4 KB p50 (${era})`,
    measured: round(rs.p50),
    limit: 0.4,
    unit: 'ms',
    pass: rs.p50 <= 0.4,
  });
  const rl = find('server', 'read_large', 1, era);
  targets.push({
    target: `1 MiB read through next_action paging (${era})`,
    measured: round(rl.p50, 2),
    limit: 20,
    unit: 'ms',
    pass: rl.p50 <= 20,
    note: `${rl.reqs_per_op} calls (2000-line cap), ${Math.round(rl.kb_per_op)} KB on the wire (content in text and structuredContent); server CPU ${round(rl.server_cpu_ms_per_op, 1)} ms, harness CPU ${round(rl.client_cpu_ms_per_op, 1)} ms per op`,
  });
  const s = find('server', 'search', 1, era);
  const rgRow = find('local-cmd', 'rg -n (direct)', 1);
  const rgJson = find('local-cmd', 'rg --json (direct)', 1);
  targets.push({
    target: `search_text vs rg -n directly (${era})`,
    measured: round(s.p50 / rgRow.p50, 2),
    limit: 1.1,
    unit: '×',
    pass: s.p50 / rgRow.p50 <= 1.1,
    note: `${round(s.p50, 2)} ms vs rg -n ${round(rgRow.p50, 2)} ms, rg --json ${round(rgJson?.p50, 2)} ms`,
  });
}
const rss = Math.max(...rows.filter((x) => x.target === 'server').map((x) => x.peak_rss_mb || 0));
targets.push({
  target: 'server RSS under this load',
  measured: round(rss, 1),
  limit: 100,
  unit: 'MB',
  pass: rss <= 100,
});
const DROP = new Set(['ops_per_s_runs', 'p50_runs', 'info', 'per_request_p50_ms']);
const keep = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !DROP.has(k))));
writeResults('core', 'Core server benchmark', targets, {
  summary: keep,
  fixtures: data.fixtures,
  target: data.target,
});
