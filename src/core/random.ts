// Randomness is injected (docs/architecture.md#style, rule 7): every random byte the server uses comes from a
// RandomSource, `systemRandom` (the operating system's CSPRNG) unless a caller passes another. This module and
// core/clock.ts are the only places that read randomness or the time directly (eslint.config.js enforces it).
import { randomBytes } from 'node:crypto';

/** Where random bytes come from. */
export type RandomSource = (bytes: number) => Buffer;

export const systemRandom: RandomSource = (n) => randomBytes(n);

/** `bytes` random bytes as URL-safe text (base64url, no padding): tokens, credentials, nonces. */
export function randomBase64url(bytes: number, random: RandomSource = systemRandom): string {
  return random(bytes).toString('base64url');
}

/** `bytes` random bytes as lower-case hex: short ids and file-name suffixes. */
export function randomHex(bytes: number, random: RandomSource = systemRandom): string {
  return random(bytes).toString('hex');
}

/** A uniform integer in [0, max) for max ≤ 2^32, without modulo bias (rejection sampling). */
export function randomIndex(max: number, random: RandomSource = systemRandom): number {
  const limit = Math.floor(0x1_0000_0000 / max) * max;
  for (;;) {
    const n = random(4).readUInt32BE(0);
    if (n < limit) return n % max;
  }
}
