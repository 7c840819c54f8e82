// A small line diff for workspaces that are not repositories (git/baseline): Myers' O(ND) shortest edit script
// after trimming the common prefix and suffix, rendered as unified hunks the way git prints them. When the
// edit distance passes MAX_EDIT_DISTANCE the middle is shown as one replacement (correct, just not minimal),
// so a rewritten large file costs bounded time and memory. Pure; no I/O.

export const MAX_EDIT_DISTANCE = 1000;

type Op = { op: ' ' | '-' | '+'; line: string };

/** Marks a last line that has no final newline, so `x` and `x\n` compare as different lines. */
const NO_EOL_MARK = '\u0000';
const NO_EOL_TEXT = '\\ No newline at end of file';

/** Lines without their `\n`; a last line without one carries NO_EOL_MARK (text with NUL is binary upstream). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += NO_EOL_MARK;
  return lines;
}

/** Myers' greedy forward search on interned lines; V is kept per d for k in [-d, d] only (O(D²) memory). */
function myers(a: Int32Array, b: Int32Array): Array<' ' | '-' | '+'> | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const trace: Int32Array[] = [];
  let prev = new Int32Array(3); // d = -1: x = 0 on diagonal k = 1
  for (let d = 0; d <= max; d++) {
    const v = new Int32Array(2 * d + 3);
    const off = d + 1;
    const poff = d;
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && prev[k - 1 + poff]! < prev[k + 1 + poff]!);
      let x = d === 0 ? 0 : down ? prev[k + 1 + poff]! : prev[k - 1 + poff]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[k + off] = x;
      if (x >= n && y >= m) {
        trace.push(v);
        return backtrack(trace, n, m);
      }
    }
    trace.push(v);
    prev = v;
  }
  return null;
}

function backtrack(trace: Int32Array[], n: number, m: number): Array<' ' | '-' | '+'> {
  const ops: Array<' ' | '-' | '+'> = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const prev = trace[d - 1]!;
    const poff = d;
    const k = x - y;
    const down = k === -d || (k !== d && prev[k - 1 + poff]! < prev[k + 1 + poff]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[prevK + poff]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(' ');
      x--;
      y--;
    }
    ops.push(down ? '+' : '-');
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    ops.push(' ');
    x--;
    y--;
  }
  return ops.reverse();
}

/** The edit script from a to b. */
export function diffLines(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf])
    suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const ids = new Map<string, number>();
  const intern = (l: string) => {
    let id = ids.get(l);
    if (id === undefined) ids.set(l, (id = ids.size));
    return id;
  };
  const script = myers(Int32Array.from(midA, intern), Int32Array.from(midB, intern));
  const mid: Op[] = [];
  if (script) {
    let i = 0;
    let j = 0;
    for (const op of script) {
      if (op === ' ') {
        mid.push({ op, line: midA[i++]! });
        j++;
      } else if (op === '-') mid.push({ op, line: midA[i++]! });
      else mid.push({ op, line: midB[j++]! });
    }
  } else {
    for (const line of midA) mid.push({ op: '-', line });
    for (const line of midB) mid.push({ op: '+', line });
  }
  const same = (line: string) => ({ op: ' ' as const, line });
  return [...a.slice(0, pre).map(same), ...mid, ...a.slice(a.length - suf).map(same)];
}

function range(start0: number, count: number): string {
  if (count === 0) return `${start0},0`;
  return count === 1 ? `${start0 + 1}` : `${start0 + 1},${count}`;
}

/** Unified hunks (`@@ -a,b +c,d @@` …) between two texts with `context` lines around changes; '' when equal. */
export function unifiedHunks(before: string, after: string, context: number): string {
  const ops = diffLines(splitLines(before), splitLines(after));
  const rows: Array<Op & { a: number; b: number }> = [];
  let a = 0;
  let b = 0;
  for (const o of ops) {
    rows.push({ ...o, a, b });
    if (o.op !== '+') a++;
    if (o.op !== '-') b++;
  }
  const changes: number[] = [];
  rows.forEach((r, i) => r.op !== ' ' && changes.push(i));
  if (changes.length === 0) return '';
  const out: string[] = [];
  let c = 0;
  while (c < changes.length) {
    let last = changes[c]!;
    const start = Math.max(0, last - context);
    while (c + 1 < changes.length && changes[c + 1]! - last - 1 <= 2 * context) last = changes[++c]!;
    c++;
    const stop = Math.min(rows.length, last + context + 1);
    let aCount = 0;
    let bCount = 0;
    const body: string[] = [];
    for (let k = start; k < stop; k++) {
      const r = rows[k]!;
      if (r.op !== '+') aCount++;
      if (r.op !== '-') bCount++;
      const noEol = r.line.endsWith(NO_EOL_MARK);
      body.push(r.op + (noEol ? r.line.slice(0, -1) : r.line));
      if (noEol) body.push(NO_EOL_TEXT);
    }
    out.push(`@@ -${range(rows[start]!.a, aCount)} +${range(rows[start]!.b, bCount)} @@`, ...body);
  }
  return out.join('\n') + '\n';
}
