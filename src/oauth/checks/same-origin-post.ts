// The password form is submitted from this server's own page (docs/oauth.md#the-authorization-page; RFC 9700
// §4.7 CSRF, Fetch metadata): when the browser says where the submission came from, it must be this origin.
// `Sec-Fetch-Site`, when present, must be `same-origin`; `Origin`, when present, must be the public origin of
// this server (`null` — a sandboxed or opaque page — is another origin). Clients that send neither (scripts,
// older browsers) still need the page's CSRF handle and the password. → a 403 page.
import type { IncomingHttpHeaders } from 'node:http';
import { oauthError, type OAuthError } from '../errors.js';

export function checkSameOriginPost(headers: IncomingHttpHeaders, base: string): OAuthError | undefined {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string' && site.toLowerCase() !== 'same-origin') {
    return oauthError(
      'access_denied',
      `The password form was submitted from another site (Sec-Fetch-Site: ${site}); open the authorization page from the application you are connecting and submit it there`,
      403,
    );
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  let expected: string;
  try {
    expected = new URL(base).origin;
  } catch {
    expected = base;
  }
  let given: string | undefined;
  try {
    given = origin === 'null' ? undefined : new URL(origin).origin;
  } catch {
    given = undefined;
  }
  if (given !== undefined && given === expected) return undefined;
  return oauthError(
    'access_denied',
    `The password form was submitted from ${origin}, not from this server (${expected}); open the authorization page from the application you are connecting and submit it there`,
    403,
  );
}
