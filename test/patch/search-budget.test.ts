// The budgeted not-found searches (src/patch/search-budget.ts): the near miss and the most similar region are
// still found in a normal file, compare at most MAX_COMPARED_CHARS of a long missing text, and stop when their
// time is up with the best found so far. Time comes from a clock that moves a fixed step each time it is read,
// so where a budget runs out does not depend on this machine's speed.
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { TimeSlicer } from '../../src/core/slice.js';
import { findNearMiss, viewOf } from '../../src/patch/edit-text.js';
import { LineIndex } from '../../src/patch/line-index.js';
import {
  cutNote,
  MAX_COMPARED_CHARS,
  oneSearchAtATime,
  SEARCH_BUDGET_MS,
  searchBudgets,
  searchCuts,
} from '../../src/patch/search-budget.js';
import { nearestRegion } from '../../src/patch/similar.js';
import { decodeDoc } from '../../src/patch/text-doc.js';

/** A clock that moves `step` ms each time it is read: a budget runs out after a fixed number of looks. */
function steppingClock(step: number): Clock {
  let t = 0;
  return { now: () => 1_700_000_000_000 + t, monotonic: () => (t += step) };
}

function source(lines: number): string[] {
  return Array.from({ length: lines }, (_, i) => `  const value${i} = compute(${i}, "alpha beta gamma");`);
}

function indexOf(lines: string[]): LineIndex {
  const doc = decodeDoc(Buffer.from(lines.join('\n') + '\n'));
  if (!doc.ok) throw new Error('not text');
  return new LineIndex(doc.doc.lines, doc.doc.joined);
}

function viewFor(lines: string[]) {
  const doc = decodeDoc(Buffer.from(lines.join('\n') + '\n'));
  if (!doc.ok) throw new Error('not text');
  return viewOf(doc.doc);
}

describe('within the budget, in a normal file', () => {
  const file = source(5000);

  it('the near miss (indentation) is found, and nothing says the search was cut', async () => {
    const old = file
      .slice(2500, 2503)
      .map((l) => l.trim())
      .join('\n');
    const r = await findNearMiss(viewFor(file), old, false, searchBudgets().nearMiss);
    expect(r.cut).toBeUndefined();
    expect(r.near?.kind).toBe('whitespace');
    expect(r.near?.candidate).toBe(file.slice(2500, 2503).join('\n').trimStart());
  });

  it('the most similar region of lines that changed since they were read is found where they are', async () => {
    const old = file.slice(3000, 3004).map((l, k) => (k === 1 ? l.replace('alpha', 'ALPHA') : l));
    old[3] = 'a line that is nowhere in the file';
    const r = await nearestRegion(indexOf(file), old, 0, searchBudgets().region);
    expect(r.cut).toBeUndefined();
    expect(r.region).toMatchObject({ start: 3000, equal: 2, compared: 4 });
  });

  it('a region is found by similarity when no line of it occurs verbatim', async () => {
    const old = [file[4100]!.replace('gamma', 'gamme').replace('compute', 'computed')];
    const r = await nearestRegion(indexOf(file), old, 0, searchBudgets().region);
    expect(r.region?.start).toBe(4100);
  });
});

describe('a missing text longer than MAX_COMPARED_CHARS', () => {
  const file = source(20_000);
  // The file's lines 100.. (changed slightly, so nothing matches), then far more than the limit of other lines.
  const head = file.slice(100, 110).map((l) => l.replace('alpha', 'ALPHA'));
  head[0] = file[100] as string;
  const tail = Array.from({ length: 5000 }, (_, i) => `let other${i} = differ(${i}, 'omega psi chi');`);
  const old = [...head, ...tail];
  const chars = old.join('\n').length;

  it('is not looked for as a near miss (the size cut is said), and its first 64 KiB find the region', async () => {
    expect(chars).toBeGreaterThan(MAX_COMPARED_CHARS);
    const near = await findNearMiss(viewFor(file), old.join('\n'), false, searchBudgets().nearMiss);
    expect(near).toEqual({ cut: 'size' });
    const r = await nearestRegion(indexOf(file), old, 0, searchBudgets().region);
    expect(r.cut).toBe('size');
    expect(r.region?.start).toBe(100);
    expect(r.region?.compared).toBeLessThan(old.length);
    const compared = old.slice(0, r.region?.compared).join('\n').length;
    expect(compared).toBeLessThanOrEqual(MAX_COMPARED_CHARS);
  });

  it('a single line longer than the limit is compared by its start', async () => {
    const long = Array.from({ length: 9000 }, (_, i) => `w${i}`).join(' ');
    const lines = [...file];
    lines[700] = long;
    const line = `${long} ${'x'.repeat(3 * MAX_COMPARED_CHARS)}`;
    const r = await nearestRegion(indexOf(lines), [line], 0, searchBudgets().region);
    expect(r.region?.start).toBe(700);
    expect(r.cut).toBe('size');
    expect(r.region?.compared).toBe(1);
  });

  it('the answer says what was cut and how to narrow it', () => {
    const cuts = searchCuts(chars, 'time');
    expect(cuts).toEqual(['size', 'time']);
    const note = cutNote(cuts, 'old_string', chars);
    expect(note).toContain(
      `compared only the first ${MAX_COMPARED_CHARS} characters of old_string (it has ${chars})`,
    );
    expect(note).toContain('send a shorter old_string, the few lines around the change');
    expect(note).toContain(`the search was cut after ${SEARCH_BUDGET_MS} ms`);
    expect(searchCuts(100)).toEqual([]);
    expect(cutNote([], 'old_string', 100)).toBe('');
  });
});

describe('out of time', () => {
  it('the near-miss search stops and says so, instead of folding the whole file', async () => {
    const file = source(60_000);
    const old = file
      .slice(50_000, 50_002)
      .map((l) => l.trim())
      .join('\n');
    const budget = new TimeSlicer(SEARCH_BUDGET_MS, steppingClock(30));
    const r = await findNearMiss(viewFor(file), old, false, budget);
    expect(r).toEqual({ cut: 'time' });
    // The same search with time to spare finds it.
    const full = await findNearMiss(viewFor(file), old, false, new TimeSlicer(600_000));
    expect(full.near?.kind).toBe('whitespace');
  });

  it('the similarity scan stops with the best region found so far', async () => {
    const file = source(20_000);
    // Nothing occurs verbatim, so the scan compares line after line from the top: line 5 is near, line 19,000
    // nearer still, but the budget runs out long before it.
    const old = [file[5]!.replace('alpha', 'alpah')];
    file[19_000] = old[0]!.replace('"', "'");
    const budget = new TimeSlicer(SEARCH_BUDGET_MS, steppingClock(30));
    const r = await nearestRegion(indexOf(file), old, 0, budget);
    expect(r.cut).toBe('time');
    expect(r.region).toMatchObject({ start: 5, cut: 'time' });
  });
});

it('searches run one at a time: the second starts when the first has ended', async () => {
  const order: string[] = [];
  let release!: () => void;
  const first = oneSearchAtATime(async () => {
    order.push('first start');
    await new Promise<void>((r) => (release = r));
    order.push('first end');
  });
  const second = oneSearchAtATime(async () => {
    order.push('second start');
  });
  await Promise.resolve();
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual(['first start']);
  release();
  await Promise.all([first, second]);
  expect(order).toEqual(['first start', 'first end', 'second start']);
});
