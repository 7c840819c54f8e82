// Static readers for the container files (docs/design-notes.md#tests: no Docker engine or cluster here, and
// no YAML dependency): Dockerfile instructions with continuations joined, ENV/ARG pairs, and a strict parser
// for the block-YAML subset the Kubernetes example uses (mappings, `- ` sequences, `[a, b]`, `{}`, plain and
// quoted scalars, `---` documents). Anything outside that subset throws, so a future edit cannot slip past
// the checks.

export interface Instruction {
  op: string;
  args: string;
  line: number;
}

export function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let buf = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (buf === '' && (line.trim() === '' || line.trim().startsWith('#'))) return;
    if (buf !== '' && line.trim().startsWith('#')) return; // comment inside a continuation
    if (buf === '') start = i + 1;
    buf += (buf ? ' ' : '') + line.replace(/\\$/, '').trim();
    if (line.endsWith('\\')) return;
    const m = /^(\w+)\s+(.*)$/s.exec(buf);
    if (!m) throw new Error(`Dockerfile line ${start}: cannot parse ${buf}`);
    out.push({ op: (m[1] as string).toUpperCase(), args: m[2] as string, line: start });
    buf = '';
  });
  if (buf) throw new Error('Dockerfile ends inside a line continuation');
  return out;
}

/** `ENV A=1 B="x y"` or the legacy `ENV A value` → pairs (ARG without a value gives undefined). */
export function keyValues(args: string): Array<[string, string | undefined]> {
  if (!args.includes('=') || (/^\S+\s/.test(args) && !/^\S+=/.test(args))) {
    const [k, ...rest] = args.split(/\s+/);
    return [[k as string, rest.length ? rest.join(' ') : undefined]];
  }
  const pairs: Array<[string, string | undefined]> = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)(?:=("(?:[^"\\]|\\.)*"|'[^']*'|\S*))?/g;
  for (const m of args.matchAll(re)) pairs.push([m[1] as string, m[2]?.replace(/^(["'])(.*)\1$/, '$2')]);
  return pairs;
}

interface YLine {
  indent: number;
  text: string;
  n: number;
}

function scalar(raw: string, n: number): unknown {
  const s = raw.trim();
  if (/^['"]/.test(s)) {
    const m = /^(['"])(.*)\1$/.exec(s);
    if (!m) throw new Error(`YAML line ${n}: unterminated quote`);
    return m[2];
  }
  if (s === '{}') return {};
  if (s.startsWith('[')) {
    if (!s.endsWith(']')) throw new Error(`YAML line ${n}: unsupported flow sequence`);
    const inner = s.slice(1, -1).trim();
    return inner ? inner.split(',').map((x) => scalar(x, n)) : [];
  }
  if (/^[&*!|>{]/.test(s) || s.includes(' #'))
    throw new Error(`YAML line ${n}: outside the supported subset: ${s}`);
  if (s === 'true' || s === 'false') return s === 'true';
  if (/^0[0-7]+$/.test(s)) return parseInt(s, 8); // YAML 1.1 octal, as Kubernetes reads it
  if (/^-?\d+$/.test(s)) return Number(s);
  return s;
}

function node(lines: YLine[], i: number, indent: number): [unknown, number] {
  const first = lines[i];
  if (!first || first.indent !== indent) throw new Error(`YAML line ${first?.n ?? 'end'}: bad indentation`);
  if (first.text.startsWith('- ')) {
    const seq: unknown[] = [];
    while (lines[i] && lines[i]?.indent === indent && lines[i]?.text.startsWith('- ')) {
      const cur = lines[i] as YLine;
      const rest = cur.text.slice(2);
      if (/^[^'"[{][^:]*:(\s|$)/.test(rest)) {
        lines[i] = { indent: indent + 2, text: rest, n: cur.n };
        const [v, next] = node(lines, i, indent + 2);
        seq.push(v);
        i = next;
      } else {
        seq.push(scalar(rest, cur.n));
        i++;
      }
    }
    return [seq, i];
  }
  const map: Record<string, unknown> = {};
  while (lines[i] && (lines[i] as YLine).indent === indent) {
    const cur = lines[i] as YLine;
    const m = /^([^'"\s][^:]*):(?:\s+(.*))?$/.exec(cur.text);
    if (!m) throw new Error(`YAML line ${cur.n}: expected "key: value", got ${cur.text}`);
    const key = m[1] as string;
    if (key in map) throw new Error(`YAML line ${cur.n}: duplicate key ${key}`);
    if (m[2] !== undefined && m[2] !== '') {
      map[key] = scalar(m[2], cur.n);
      i++;
      continue;
    }
    const next = lines[i + 1];
    if (!next || next.indent < indent || (next.indent === indent && !next.text.startsWith('- ')))
      throw new Error(`YAML line ${cur.n}: ${key} has no value`);
    const [v, after] = node(lines, i + 1, next.indent);
    map[key] = v;
    i = after;
  }
  return [map, i];
}

/** The documents of a multi-document YAML file in the subset above. */
export function parseYamlDocs(text: string): unknown[] {
  const docs: YLine[][] = [[]];
  text.split('\n').forEach((raw, idx) => {
    if (raw.includes('\t')) throw new Error(`YAML line ${idx + 1}: tab`);
    const t = raw.trimEnd();
    if (t.trim() === '' || t.trim().startsWith('#')) return;
    if (t === '---') return void docs.push([]);
    docs[docs.length - 1]?.push({ indent: t.length - t.trimStart().length, text: t.trim(), n: idx + 1 });
  });
  return docs
    .filter((d) => d.length > 0)
    .map((d) => {
      const [v, end] = node(d, 0, 0);
      if (end !== d.length) throw new Error(`YAML line ${d[end]?.n}: unexpected indentation`);
      return v;
    });
}
