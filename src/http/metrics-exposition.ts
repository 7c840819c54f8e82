// The Prometheus text of /metrics (docs/operations.md#metrics), written by prom-client's Registry from what
// ServerMetrics (metrics.ts) counted in place and from gauges read now: commands running and retained, the
// process's RSS and heap, and the event loop's delay since the previous scrape (perf_hooks' histogram, started
// by the first scrape). Loaded on the first scrape only; only prom-client's registry module is loaded (the
// package's index also loads cluster, push-gateway and default-metric code this server does not use).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import type { Registry as PromRegistry } from 'prom-client';
import { DURATION_BUCKETS_S, type Labels, type ServerMetrics } from './metrics.js';
import { systemClock } from '../core/clock.js';

interface Value {
  value: number;
  labels?: Labels;
  metricName?: string;
}

interface Collected {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Value[];
  aggregator: 'sum';
}

type Read = () => Value[];

const require = createRequire(import.meta.url);

function metric(name: string, help: string, type: Collected['type'], read: Read) {
  return {
    name,
    help,
    type,
    get: (): Collected => ({ name, help, type, values: read(), aggregator: 'sum' }),
  };
}

const series = (m: Map<string, { labels: Labels; value: number }>): Value[] =>
  [...m.values()].map((s) => ({ labels: s.labels, value: s.value }));

function histogram(m: ServerMetrics, name: string): Value[] {
  const out: Value[] = [];
  for (const h of m.durations.values()) {
    let cumulative = 0;
    DURATION_BUCKETS_S.forEach((le, i) => {
      cumulative += h.counts[i] as number;
      out.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: String(le) }, value: cumulative });
    });
    out.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: '+Inf' }, value: h.count });
    out.push({ metricName: `${name}_sum`, labels: h.labels, value: h.sum });
    out.push({ metricName: `${name}_count`, labels: h.labels, value: h.count });
  }
  return out;
}

type Def = [name: string, help: string, type: Collected['type'], read: Read];

/** What ServerMetrics counted, and the commands' gauges, in the order they are exposed. */
function serverDefs(m: ServerMetrics): Def[] {
  const commands = () => m.sources.commands();
  return [
    [
      'workbench_requests_total',
      'JSON-RPC requests answered, by protocol era, method, tool (tools/call) and outcome (ok, rpc_error, input_required or the tool error code)',
      'counter',
      () => series(m.requests),
    ],
    [
      'workbench_request_duration_seconds',
      'Time to answer a JSON-RPC request, by method and tool',
      'histogram',
      () => histogram(m, 'workbench_request_duration_seconds'),
    ],
    [
      'workbench_sandbox_blocks_total',
      'Tool calls refused by workspace confinement or the permission policy, by error code',
      'counter',
      () => series(m.blocks),
    ],
    [
      'workbench_auth_failures_total',
      'Requests refused for their credentials (on /mcp and /metrics), by challenge error',
      'counter',
      () => series(m.authFailures),
    ],
    ['workbench_commands_running', 'Commands running', 'gauge', () => [{ value: commands().running }]],
    [
      'workbench_commands_retained',
      'Finished commands whose output is kept',
      'gauge',
      () => [{ value: commands().retained }],
    ],
    [
      'workbench_command_starts_total',
      'Commands started on pipes, by whether their sandbox (without one, their process) was prepared ahead',
      'counter',
      () => {
        const s = commands().starts;
        return [
          { labels: { start: 'prepared' }, value: s.prepared },
          { labels: { start: 'cold' }, value: s.cold },
        ];
      },
    ],
    [
      'workbench_command_output_retained_bytes',
      'Command output bytes kept in memory',
      'gauge',
      () => [{ value: commands().retainedBytes }],
    ],
  ];
}

/** The process's gauges: memory, the event loop's delay since the last scrape, the start time. */
function processDefs(loop: IntervalHistogram): Def[] {
  const loopSeconds = (q: number | 'max') => () => {
    if (loop.count === 0) return [{ value: 0 }]; // no sample yet: nothing was delayed
    const ns = q === 'max' ? loop.max : loop.percentile(q);
    return [{ value: Number.isFinite(ns) ? ns / 1e9 : 0 }];
  };
  const started = Math.round(systemClock.now() / 1000 - process.uptime());
  return [
    [
      'process_resident_memory_bytes',
      'Resident memory size in bytes',
      'gauge',
      () => [{ value: process.memoryUsage.rss() }],
    ],
    [
      'nodejs_heap_size_used_bytes',
      'Process heap size used from Node.js in bytes',
      'gauge',
      () => [{ value: process.memoryUsage().heapUsed }],
    ],
    [
      'nodejs_eventloop_lag_p50_seconds',
      'The 50th percentile of the event loop delay since the last scrape',
      'gauge',
      loopSeconds(50),
    ],
    [
      'nodejs_eventloop_lag_p99_seconds',
      'The 99th percentile of the event loop delay since the last scrape',
      'gauge',
      loopSeconds(99),
    ],
    [
      'nodejs_eventloop_lag_max_seconds',
      'The longest event loop delay since the last scrape',
      'gauge',
      loopSeconds('max'),
    ],
    [
      'process_start_time_seconds',
      'Start time of the process since unix epoch in seconds',
      'gauge',
      () => [{ value: started }],
    ],
  ];
}

/**
 * prom-client's registry, loaded now rather than on the first scrape: the server loads no code of its own after
 * its first tool call (tools/lazy-catalog.ts), since a command may by then have rewritten its files.
 */
export function loadMetricsCode(): void {
  require('prom-client/lib/registry.js');
}

export class Exposition {
  private readonly registry: PromRegistry;
  private readonly loop: IntervalHistogram;

  constructor(m: ServerMetrics) {
    // Deep import of the one module used (typed as the package's Registry, which it is).
    const Registry = require('prom-client/lib/registry.js') as new () => PromRegistry;
    this.registry = new Registry();
    this.loop = monitorEventLoopDelay({ resolution: 20 });
    this.loop.enable();
    for (const def of [...serverDefs(m), ...processDefs(this.loop)])
      this.registry.registerMetric(metric(...def) as never);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  async text(): Promise<string> {
    const body = await this.registry.metrics();
    this.loop.reset(); // the delay gauges cover the time between two scrapes
    return body;
  }

  close(): void {
    this.loop.disable();
  }
}
