// A `resource` parameter (RFC 8707 §2) must name this server: `<base>/mcp` or `<base>`, with or without a
// trailing slash (docs/oauth.md#the-authorization-page, beyond: clients differ). It is an absolute
// URI without a fragment; anything else — another server's URL included — is invalid_target. Used by the
// authorization endpoint and, for token requests, by the code and refresh checks.
import { oauthError, type OAuthError } from '../errors.js';
import type { Form } from '../http-io.js';

/** The exact resource URL tokens are bound to (docs/oauth.md#access-tokens): `<base>/mcp`. */
export function resourceOf(base: string): string {
  return `${base}/mcp`;
}

function normalise(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.hash || uri.includes('#') || u.search || u.username || u.password) return undefined;
  return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, '');
}

/** True when `value` names this server's MCP resource. */
export function namesThisServer(value: string, base: string): boolean {
  const v = normalise(value);
  if (v === undefined) return false;
  const b = normalise(base);
  return v === b || v === normalise(resourceOf(base));
}

export function checkResourceIndicator(ctx: { form: Form; base: string }): OAuthError | undefined {
  for (const value of ctx.form.params.getAll('resource')) {
    if (!namesThisServer(value, ctx.base)) {
      return oauthError(
        'invalid_target',
        `resource ${JSON.stringify(value)} is not this server; use ${resourceOf(ctx.base)}`,
      );
    }
  }
  return undefined;
}
