// Which finished commands the registry forgets (docs/design-notes.md#bash-and-retention): past the retention
// time, the finished-count limit and the total-bytes limit, oldest first. A command whose final status was never
// returned is exempt until the count or bytes reach twice their limit, so memory stays bounded even when nobody
// polls. A pure choice over the registry's commands; registry.ts deletes what it names.
import type { Command } from './command.js';

export interface RetentionLimits {
  retentionMs: number;
  maxKept: number;
  maxBytes: number;
}

/** The finished commands to forget now, given every command the registry holds. */
export function toEvict(commands: Iterable<Command>, limits: RetentionLimits, now: number): Command[] {
  const all = [...commands];
  const keep = all
    .filter((c) => !c.running)
    .sort((a, b) => (a.finishedAt as number) - (b.finishedAt as number));
  const gone: Command[] = [];
  const evict = (c: Command) => {
    gone.push(c);
    keep.splice(keep.indexOf(c), 1);
  };
  for (const c of [...keep])
    if (c.finalReturned && now - (c.finishedAt as number) > limits.retentionMs) evict(c);
  const oldest = (hard: boolean) => keep.find((c) => c.finalReturned) ?? (hard ? keep[0] : undefined);
  while (keep.length > limits.maxKept) {
    const victim = oldest(keep.length > 2 * limits.maxKept);
    if (!victim) break;
    evict(victim);
  }
  let total =
    [...all].reduce((n, c) => n + c.retainedBytes, 0) - gone.reduce((n, c) => n + c.retainedBytes, 0);
  while (total > limits.maxBytes) {
    const victim = oldest(total > 2 * limits.maxBytes);
    if (!victim) break;
    total -= victim.retainedBytes;
    evict(victim);
  }
  return gone;
}
