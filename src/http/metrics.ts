// What /metrics reports (docs/operations.md#metrics), recorded in place on the request path: a counter or a
// histogram bucket is one Map lookup and an add, never a promise, an allocation per label set after its first
// call, or I/O. Label values come from closed sets (the era, the methods of the protocol, the catalog's tool
// names, the tool error codes), so no client can grow the series without bound. The Prometheus text itself is
// written by prom-client's Registry, loaded on the first scrape only (metrics-exposition.ts): a server nobody
// scrapes never loads it. RSS, heap and event-loop delay are read when scraped, not sampled in between.
import { ALL_TOOL_ERROR_CODES } from '../core/tool-error.js';

/** Upper bounds (seconds) of the call-duration histogram: a cached read to a long command's wait. */
export const DURATION_BUCKETS_S = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

const METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/read',
  'prompts/get',
  'notifications/cancelled',
  'notifications/initialized',
]);

/** Tool error codes that mean confinement or the permission policy refused the call. */
const BLOCK_CODES = new Set([
  'PATH_OUTSIDE_WORKSPACE',
  'SYMLINK_ESCAPE',
  'ABSOLUTE_PATH_DENIED',
  'PERMISSION_REQUIRED',
]);

const OUTCOMES = new Set<string>(['ok', 'rpc_error', 'input_required', ...ALL_TOOL_ERROR_CODES]);

export type Labels = Record<string, string>;

interface Series {
  labels: Labels;
  value: number;
}

interface HistogramSeries {
  labels: Labels;
  /** Cumulative counts are computed when scraped; here each bucket counts its own observations. */
  counts: number[];
  sum: number;
  count: number;
}

/** What the metrics read from the rest of the server when scraped. */
export interface MetricsSources {
  /** The tool names of the catalog (the only `tool` label values besides "unknown"). */
  tools: readonly string[];
  commands: () => {
    running: number;
    retained: number;
    retainedBytes: number;
    starts: { readonly prepared: number; readonly cold: number };
  };
}

function bump(map: Map<string, Series>, key: string, labels: Labels, by = 1): void {
  const s = map.get(key);
  if (s) s.value += by;
  else map.set(key, { labels, value: by });
}

export class ServerMetrics {
  readonly requests = new Map<string, Series>();
  readonly durations = new Map<string, HistogramSeries>();
  readonly authFailures = new Map<string, Series>();
  readonly blocks = new Map<string, Series>();
  private readonly tools: ReadonlySet<string>;

  constructor(readonly sources: MetricsSources) {
    this.tools = new Set(sources.tools);
  }

  /** One answered JSON-RPC request: its era, method, tool (tools/call), outcome and how long it took. */
  request(era: string, method: string, tool: string | undefined, outcome: string, seconds: number): void {
    const m = METHODS.has(method) ? method : 'other';
    const t = tool === undefined ? '' : this.tools.has(tool) ? tool : 'unknown';
    const o = OUTCOMES.has(outcome) ? outcome : 'other';
    const e = era === 'modern' ? 'modern' : 'handshake';
    bump(this.requests, `${e}|${m}|${t}|${o}`, { era: e, method: m, tool: t, outcome: o });
    if (BLOCK_CODES.has(o)) bump(this.blocks, o, { code: o });
    const key = `${m}|${t}`;
    let h = this.durations.get(key);
    if (!h) {
      h = {
        labels: { method: m, tool: t },
        counts: new Array<number>(DURATION_BUCKETS_S.length).fill(0),
        sum: 0,
        count: 0,
      };
      this.durations.set(key, h);
    }
    let i = 0;
    while (i < DURATION_BUCKETS_S.length && seconds > (DURATION_BUCKETS_S[i] as number)) i++;
    if (i < DURATION_BUCKETS_S.length) (h.counts[i] as number)++;
    h.sum += seconds;
    h.count++;
  }

  /** A request refused for its credentials (on /mcp or /metrics), by the challenge's error code. */
  authFailure(reason: string): void {
    const r = /^[a-z_]{1,32}$/.test(reason) ? reason : 'other';
    bump(this.authFailures, r, { reason: r });
  }
}
