// core/quiet, which the dispatcher brackets each tool call with: work deferred while a call is answered (the
// next prepared jail) runs once none is and no request came for GRACE_MS after the last answer, or after
// MAX_WAIT_MS when calls never stop.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GRACE_MS, MAX_WAIT_MS, QuietTime } from '../../src/core/quiet.js';

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

  it('holds work until the last answer ends and GRACE_MS passed without a request; a request in between goes first', async () => {
    vi.useFakeTimers();
    const q = new QuietTime();
    const ran: string[] = [];
    const end1 = q.begin();
    const end2 = q.begin();
    q.later(() => ran.push('refill'));
    end1();
    vi.advanceTimersByTime(GRACE_MS);
    expect(ran, 'one answer still running').toEqual([]);
    end2();
    end2(); // ending twice counts once
    void Promise.resolve().then(() => ran.push('answer written'));
    await Promise.resolve();
    vi.advanceTimersByTime(GRACE_MS - 1);
    expect(ran).toEqual(['answer written']);
    // The client's next request comes before the grace is over: it is answered before the work runs.
    const end3 = q.begin();
    vi.advanceTimersByTime(GRACE_MS);
    expect(ran).toEqual(['answer written']);
    end3();
    vi.advanceTimersByTime(GRACE_MS - 1);
    expect(ran).toEqual(['answer written']);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual(['answer written', 'refill']);
    // The count went back to zero exactly once: a new answer holds new work again.
    const end4 = q.begin();
    q.later(() => ran.push('second'));
    vi.advanceTimersByTime(GRACE_MS);
    expect(ran).toHaveLength(2);
    end4();
    vi.advanceTimersByTime(GRACE_MS);
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
