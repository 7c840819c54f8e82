// Types of the other registration members this server reads (RFC 7591 §2): strings where the RFC says string,
// arrays of strings for grant_types/response_types/contacts, scope in RFC 6749 §3.3 syntax. Members it does
// not understand are ignored (RFC 7591 §2); a wrong type of a known member is invalid_client_metadata.
// normaliseMetadata() runs first (docs/design-notes.md#registration-leniency): a null member is absent, and
// an empty scope is no scope.
import { oauthError, type OAuthError } from '../errors.js';
import { scopeProblem } from './scope-syntax.js';

const STRING_FIELDS: Record<string, number> = {
  client_name: 200,
  client_uri: 2000,
  logo_uri: 2000,
  tos_uri: 2000,
  policy_uri: 2000,
  jwks_uri: 2000,
  application_type: 50,
  software_id: 200,
  software_version: 100,
  scope: 1000,
};

/**
 * The metadata as this server reads it: members whose value is null are dropped (clients built on typed models
 * send `"logo_uri": null` for "not set"), and `scope` is trimmed with runs of spaces collapsed — an empty or
 * blank scope is no scope (Gemini CLI and MCP Inspector send `"scope": ""`).
 */
export function normaliseMetadata(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (v !== null) out[k] = v;
  if (typeof out.scope === 'string') {
    const scope = out.scope.trim().split(/ +/).join(' ');
    if (scope === '') delete out.scope;
    else out.scope = scope;
  }
  return out;
}
const STRING_ARRAY_FIELDS = ['grant_types', 'response_types', 'contacts'];

export function checkMetadataTypes(meta: Record<string, unknown>): OAuthError | undefined {
  for (const [name, max] of Object.entries(STRING_FIELDS)) {
    const v = meta[name];
    if (v === undefined) continue;
    if (typeof v !== 'string') return oauthError('invalid_client_metadata', `${name} must be a string`);
    if (v.length > max)
      return oauthError('invalid_client_metadata', `${name} is longer than ${max} characters`);
  }
  for (const name of STRING_ARRAY_FIELDS) {
    const v = meta[name];
    if (v === undefined) continue;
    if (!Array.isArray(v) || v.length > 20 || !v.every((s) => typeof s === 'string' && s.length <= 200)) {
      return oauthError('invalid_client_metadata', `${name} must be an array of strings`);
    }
  }
  if (typeof meta.scope === 'string') {
    const problem = scopeProblem(meta.scope);
    if (problem) return oauthError('invalid_client_metadata', problem);
  }
  return undefined;
}
