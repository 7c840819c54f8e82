// Access tokens (docs/oauth.md#access-tokens): HS256 JWTs made with jose, carrying iss,
// aud = the exact MCP resource URL, sub and client_id, iat, exp, jti, and sid (the grant family, so revoking
// a family revokes its tokens). Verification pins the algorithm to HS256 (no `none`, no key confusion), the
// issuer and the audience, and reads time from the injected clock.
import { jwtVerify, SignJWT, errors as joseErrors, type JWTPayload } from 'jose';
import type { Clock } from '../../core/clock.js';
import { randomToken, type RandomSource } from '../secrets.js';

export const ACCESS_TOKEN_TYP = 'at+jwt'; // RFC 9068 §2.1

export interface AccessClaims {
  iss: string;
  aud: string;
  sub: string;
  client_id: string;
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  scope?: string;
}

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: string };

export class AccessTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  get ttl(): number {
    return this.ttlSeconds;
  }

  async issue(p: {
    issuer: string;
    audience: string;
    clientId: string;
    familyId: string;
    scope?: string;
  }): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(this.clock.now() / 1000);
    const exp = iat + this.ttlSeconds;
    const payload: Record<string, string> = { client_id: p.clientId, sid: p.familyId };
    if (p.scope) payload.scope = p.scope;
    const token = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: ACCESS_TOKEN_TYP })
      .setIssuer(p.issuer)
      .setAudience(p.audience)
      .setSubject(p.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomToken(this.random, 16))
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }

  async verify(token: string, expected: { issuer: string; audience: string }): Promise<VerifyResult> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: expected.issuer,
        audience: expected.audience,
        typ: ACCESS_TOKEN_TYP,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['iss', 'aud', 'sub', 'client_id', 'sid', 'jti', 'iat', 'exp'],
      });
      // aud must be exactly the resource, not a list that happens to contain it.
      if (payload.aud !== expected.audience)
        return { ok: false, reason: 'the token is for another resource' };
      if (!isAccessClaims(payload) || payload.client_id !== payload.sub) {
        return { ok: false, reason: 'the token is malformed' };
      }
      return { ok: true, claims: payload };
    } catch (e) {
      return { ok: false, reason: describe(e) };
    }
  }
}

/** Every claim of AccessClaims present with its type (jose checked iss, aud, iat and exp already). */
function isAccessClaims(p: JWTPayload): p is JWTPayload & AccessClaims {
  return (
    typeof p.iss === 'string' &&
    typeof p.aud === 'string' &&
    typeof p.sub === 'string' &&
    typeof p.client_id === 'string' &&
    typeof p.sid === 'string' &&
    typeof p.jti === 'string' &&
    typeof p.iat === 'number' &&
    typeof p.exp === 'number' &&
    (p.scope === undefined || typeof p.scope === 'string')
  );
}

function describe(e: unknown): string {
  if (e instanceof joseErrors.JWTExpired)
    return 'the access token has expired; refresh it or authorize again';
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'aud') return 'the access token was issued for another resource';
    if (e.claim === 'iss') return 'the access token was issued by another server';
    return `the access token claim ${e.claim} is not valid`;
  }
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return 'the access token is not signed with HS256';
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return 'the access token signature is not valid for this server';
  return 'the access token is not valid for this server';
}
