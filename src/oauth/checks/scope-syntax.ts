// Scope syntax (RFC 6749 §3.3): space-delimited tokens of %x21 / %x23-5B / %x5D-7E. This server grants the
// whole workspace to an authorized client and has no scope catalogue (docs/oauth.md#registration), so any
// well-formed scope is accepted and echoed; a malformed one is invalid_scope.
import { oauthError, type OAuthError } from '../errors.js';
import type { Form } from '../http-io.js';

export function scopeProblem(scope: string): string | undefined {
  if (scope.length > 1000) return 'scope is longer than 1000 characters';
  const tokens = scope.split(' ');
  if (tokens.some((t) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(t)))
    return 'scope must be space-separated tokens without quotes or backslashes (RFC 6749 §3.3)';
  return undefined;
}

export function checkScope(ctx: { form: Form }): OAuthError | undefined {
  const scope = ctx.form.get('scope');
  if (scope === undefined) return undefined;
  const problem = scopeProblem(scope);
  return problem ? oauthError('invalid_scope', problem) : undefined;
}
