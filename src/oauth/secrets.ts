// Randomness and digests for every secret the authorization server mints (client secrets, codes, refresh
// tokens, CSRF handles, the generated password). Randomness is injected (docs/architecture.md#style, rule 7)
// so tests can make it deterministic; stores keep only digests, never the secrets themselves.
import { createHash } from 'node:crypto';
import { systemRandom, type RandomSource } from '../core/random.js';

/** Where every random byte of the OAuth server comes from (core/random.ts). */
export { systemRandom, type RandomSource };

/** A URL-safe random token carrying `bytes` bytes of entropy (base64url, no padding). */
export function randomToken(random: RandomSource, bytes = 32): string {
  return random(bytes).toString('base64url');
}

/** SHA-256 hex digest: what the stores keep in place of a secret (docs/oauth.md#registration: stored only as a digest). */
export function digest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

// 32 symbols without look-alikes (no l/1, o/0), so a password read off a terminal can be typed on a phone.
const PASSWORD_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** A generated operator password: 4 groups of 5 symbols (100 bits), e.g. `k7mqa-2bx9e-…`. */
export function generatePassword(random: RandomSource): string {
  const bytes = random(20);
  let out = '';
  for (let i = 0; i < 20; i++) {
    if (i > 0 && i % 5 === 0) out += '-';
    out += PASSWORD_ALPHABET[(bytes[i] as number) & 31];
  }
  return out;
}
