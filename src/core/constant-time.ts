// The one door for comparing secrets. Both sides are hashed first so that the comparison takes the same time
// whatever the lengths, and every candidate is compared (no early exit) so timing does not reveal which one
// matched or how many there are.
import nodeCrypto, { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Node's one-shot hash (20.12 on; read off the module object, so an older Node 20 loads this file too) costs a
 * third of a Hash object's; every /mcp request digests its token once.
 */
const oneShot = typeof nodeCrypto.hash === 'function' ? nodeCrypto.hash : undefined;

function digest(s: string): Buffer {
  return oneShot ? oneShot('sha256', s, 'buffer') : createHash('sha256').update(s, 'utf8').digest();
}

export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** A set of secrets digested once, so each check hashes only the candidate. */
export class SecretSet {
  private readonly digests: Buffer[];
  constructor(secrets: readonly string[]) {
    this.digests = secrets.map(digest);
  }
  /** Index of the matching secret or -1; every secret is compared, whatever matches. */
  indexOf(candidate: string): number {
    const c = digest(candidate);
    let found = -1;
    for (let i = 0; i < this.digests.length; i++) {
      if (timingSafeEqual(c, this.digests[i] as Buffer) && found === -1) found = i;
    }
    return found;
  }
}
