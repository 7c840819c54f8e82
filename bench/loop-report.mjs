// The rows of bench/loop-bench.mjs: each call and the whole loop (median over runs, min–max beside it) against
// the direct floor and the Python reference server, the first command against the second, and exec_command
// `true`'s p90 against its p50 per mode.
import { round } from './lib.mjs';
import { DIRECT, STEPS } from './loop-steps.mjs';

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/** Nearest-rank percentile. */
const pct = (xs, q) => sorted(xs)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];
const ms = (x) => `${round(x, 1)} ms`;
/** "median (min–max)" of a list of ms. */
const spread = (xs) => `${ms(median(xs))} (${round(Math.min(...xs), 1)}–${round(Math.max(...xs), 1)})`;
const total = (loop) => STEPS.reduce((n, [k]) => n + loop[k], 0);

/** One row per call: this server's median, the direct step's and the reference server's beside it. */
function callRows(times) {
  return STEPS.map(([key, label]) => {
    const ours = times.ours.map((l) => l[key]);
    const ref = times.ref ? `; Python reference ${spread(times.ref.map((l) => l[key]))}` : '';
    return {
      target: label,
      measured: ms(median(ours)),
      op: '',
      limit: '–',
      result: 'reported',
      note: `min–max ${round(Math.min(...ours), 1)}–${round(Math.max(...ours), 1)} ms; direct (${DIRECT[key]}) ${spread(times.direct.map((l) => l[key]))}${ref}`,
    };
  });
}

/** The rows of the loop: each call, the whole loop against both floors, the first command against the second. */
export function loopRows(times, { mode, ref }) {
  const ours = times.ours.map(total);
  const direct = times.direct.map(total);
  const rows = callRows(times);
  const vsDirect = median(ours) / median(direct);
  rows.push({
    target: `whole loop (${mode}) vs the same six steps done directly`,
    measured: round(vsDirect, 2),
    limit: 1.3,
    unit: '×',
    pass: vsDirect <= 1.3,
    note: `${spread(ours)} vs ${spread(direct)}; paired by run (the two ran one after the other): median ${round(median(ours.map((o, i) => o / direct[i])), 2)}×`,
  });
  if (times.ref) {
    const py = times.ref.map(total);
    const vsRef = median(ours) / median(py);
    rows.push({
      target: `whole loop (${mode}) vs the Python reference server`,
      measured: round(vsRef, 2),
      limit: 0.8,
      unit: '×',
      pass: vsRef <= 0.8,
      note: `${spread(ours)} vs ${spread(py)} (\`${ref}\`); paired by run: median ${round(median(ours.map((o, i) => o / py[i])), 2)}×`,
    });
  } else {
    rows.push({
      target: `whole loop (${mode}) vs the Python reference server`,
      measured: null,
      limit: 0.8,
      unit: '×',
      result: 'not installed',
      note: 'coding-tools-mcp 0.3 is not installed here: compared with the direct floor alone',
    });
  }
  const first = median(times.ours.map((l) => l.exec_first));
  const second = median(times.ours.map((l) => l.exec_second));
  rows.push({
    target: 'first exec_command after start vs the second',
    measured: round(first / second, 2),
    limit: 1.3,
    unit: '×',
    pass: first / second <= 1.3,
    note: `${ms(first)} vs ${ms(second)} (medians)`,
  });
  return rows;
}

/** exec_command `true`'s p90 against its p50 in one mode, `gap` ms between calls. */
export function latencyRow({ mode, ms: xs, sandbox }, gap) {
  const p50 = pct(xs, 0.5);
  const p90 = pct(xs, 0.9);
  return {
    target: `exec_command \`true\` p90 vs p50 in ${mode}, ${gap} ms between calls`,
    measured: round(p90 / p50, 2),
    limit: 2,
    unit: '×',
    pass: p90 / p50 <= 2,
    note: `p50 ${round(p50, 2)} ms, p90 ${round(p90, 2)} ms, ${xs.length} calls; sandbox: ${sandbox}`,
  };
}
