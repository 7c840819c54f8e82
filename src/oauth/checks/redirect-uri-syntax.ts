// One redirect URI on its own (docs/oauth.md#registration): absolute, no
// fragment (RFC 6749 §3.1.2), no userinfo; https anywhere, http only for localhost/127.0.0.1/::1 (RFC 8252
// §7.3, RFC 9700 §2.1); private-use schemes of native apps (RFC 8252 §7.1, e.g. `cursor://…`) — PKCE binds
// those — but never a scheme a browser would run or render itself (javascript:, data:, file:, …).

/** Schemes that are not a native app's private-use redirect: script, local content, or out-of-band. */
const REFUSED_SCHEMES = new Set([
  'javascript',
  'vbscript',
  'data',
  'file',
  'blob',
  'about',
  'filesystem',
  'view-source',
  'ws',
  'wss',
  'ftp',
  'mailto',
  'tel',
  'sms',
  'urn',
  'chrome',
  'chrome-extension',
  'moz-extension',
  'intent',
]);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** Why `uri` cannot be a redirect URI, or undefined when it can. */
export function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length === 0) return 'each redirect URI must be a non-empty string';
  if (uri.length > MAX_REDIRECT_URI_LENGTH)
    return `redirect URI longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/[\s<>"\\^`{|}]/.test(uri))
    return `redirect URI ${JSON.stringify(uri)} contains characters that are not allowed in a URI`;
  // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component" — an empty `#` included.
  if (uri.includes('#')) return `redirect URI ${uri} has a fragment; remove the #… part`;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) return `redirect URI ${uri} is not an absolute URI (it needs a scheme such as https:)`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI ${uri} is not a valid absolute URI`;
  }
  if (url.username || url.password)
    return `redirect URI ${uri} carries user information (user:password@); remove it`;
  if (scheme === 'https') return url.hostname ? undefined : `redirect URI ${uri} has no host`;
  if (scheme === 'http') {
    if (LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) return undefined;
    return `redirect URI ${uri} uses http with a non-loopback host; use https, or http only with localhost, 127.0.0.1 or [::1]`;
  }
  if (REFUSED_SCHEMES.has(scheme))
    return `redirect URI scheme ${scheme}: is not allowed; use https, loopback http, or an app's private-use scheme`;
  return undefined;
}
