// What a check is: one rule, one module, a pure function of a prepared context that returns the OAuthError
// it finds or undefined. Endpoints list their checks in an explicit array and run them in that order, so
// the order of the rules is visible in one place and each module cites the RFC or spec section it enforces.
import type { OAuthError } from '../errors.js';

export type Check<C> = (ctx: C) => OAuthError | undefined;

/** Runs `checks` in order and returns the first failure. */
export function firstFailure<C>(checks: readonly Check<C>[], ctx: C): OAuthError | undefined {
  for (const check of checks) {
    const err = check(ctx);
    if (err) return err;
  }
  return undefined;
}
