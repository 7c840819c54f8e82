// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of /metrics: every line
// must be a `# HELP`, a `# TYPE` (counter, gauge, histogram, summary, untyped) or a sample `name{label="v",…}
// value` of a family declared before it, with escaped label values and a float value; a histogram's buckets
// must be cumulative and end at le="+Inf" equal to its _count. Anything else throws with the line number.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  help: string;
  type: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/;

function parseValue(v: string, n: number): number {
  if (v === '+Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  if (v === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) throw new Error(`line ${n}: bad value ${v}`);
  return Number(v);
}

function parseSample(line: string, n: number): PromSample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+-?\d+)?$/.exec(line);
  if (!m) throw new Error(`line ${n}: not a sample: ${line}`);
  const labels: Record<string, string> = {};
  let rest = (m[2] ?? '').slice(1, -1);
  while (rest.length) {
    const l = LABEL.exec(rest);
    if (!l) throw new Error(`line ${n}: bad labels: ${m[2]}`);
    const key = l[1] as string;
    if (key in labels) throw new Error(`line ${n}: label ${key} twice`);
    labels[key] = (l[2] as string).replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(l[0].length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest.length) throw new Error(`line ${n}: bad labels: ${m[2]}`);
  }
  return { name: m[1] as string, labels, value: parseValue(m[3] as string, n) };
}

const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count'],
};

function checkHistogram(f: PromFamily): void {
  const byLabels = new Map<string, PromSample[]>();
  for (const s of f.samples.filter((x) => x.name === `${f.name}_bucket`)) {
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
    const key = JSON.stringify(rest);
    byLabels.set(key, [...(byLabels.get(key) ?? []), s]);
  }
  for (const [key, buckets] of byLabels) {
    let prev = -Infinity;
    let last = -1;
    for (const b of buckets) {
      const le = parseValue(b.labels.le as string, 0);
      if (le <= prev || b.value < last) throw new Error(`${f.name}${key}: buckets not cumulative`);
      prev = le;
      last = b.value;
    }
    const count = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === key);
    if (prev !== Infinity || !count || count.value !== last)
      throw new Error(`${f.name}${key}: no +Inf bucket equal to _count`);
  }
}

export function parsePromText(text: string): PromFamily[] {
  const families = new Map<string, PromFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, help: '', type: 'untyped', samples: [] }));
    return f;
  };
  text.split('\n').forEach((line, i) => {
    const n = i + 1;
    if (line === '') return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`line ${n}: bad metric name ${name}`);
      if (kind === 'HELP') family(name).help = rest;
      else if (['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest))
        family(name).type = rest;
      else throw new Error(`line ${n}: bad type ${rest}`);
      return;
    }
    if (line.startsWith('#')) return;
    const s = parseSample(line, n);
    const owner = [...families.values()].find(
      (f) => s.name === f.name || (SUFFIXES[f.type] ?? []).some((x) => s.name === f.name + x),
    );
    if (!owner) throw new Error(`line ${n}: sample ${s.name} of no declared family`);
    owner.samples.push(s);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return [...families.values()];
}
