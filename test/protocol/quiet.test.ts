// core/quiet, which the dispatcher brackets each tool call with: work deferred while a call is answered (the
// next prepared jail) runs once none is, after the answer's own microtasks, or after MAX_WAIT_MS when calls
// never stop.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_WAIT_MS, QuietTime } from '../../src/core/quiet.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('QuietTime', () => {
  afterEach(() => vi.useRealTimers());

  it('runs at once (next turn) when nothing is answered', async () => {
    const q = new QuietTime();
    const ran: string[] = [];
    q.later(() => ran.push('a'));
    expect(ran).toEqual([]);
    await turn();
    expect(ran).toEqual(['a']);
  });

  it('holds work until the last answer ends, and runs it after what that answer does in microtasks', async () => {
    const q = new QuietTime();
    const ran: string[] = [];
    const end1 = q.begin();
    const end2 = q.begin();
    q.later(() => ran.push('refill'));
    end1();
    await turn();
    expect(ran, 'one answer still running').toEqual([]);
    end2();
    end2(); // ending twice counts once
    void Promise.resolve().then(() => ran.push('answer written'));
    await turn();
    expect(ran).toEqual(['answer written', 'refill']);
    // The count went back to zero exactly once: a new answer holds new work again.
    const end3 = q.begin();
    q.later(() => ran.push('second'));
    await turn();
    expect(ran).toHaveLength(2);
    end3();
    await turn();
    expect(ran).toEqual(['answer written', 'refill', 'second']);
  });

  it('runs held work after MAX_WAIT_MS when answers never stop', () => {
    vi.useFakeTimers();
    const q = new QuietTime();
    const ran: number[] = [];
    q.begin();
    q.later(() => ran.push(1));
    q.later(() => ran.push(2));
    vi.advanceTimersByTime(MAX_WAIT_MS - 1);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual([1, 2]);
  });
});
