// The discovery documents (docs/oauth.md#endpoints, docs/oauth.md#metadata): protected-resource metadata (RFC
// 9728 §2) at both /.well-known/oauth-protected-resource and its path-inserted form
// …/oauth-protected-resource/mcp (RFC 9728 §3.1), and authorization-server metadata (RFC 8414 §2). One issuer
// string everywhere: `<base>`, no trailing slash, the same value as `iss` in responses and tokens (RFC 8414
// §3.3, RFC 9207 §2). Client ID Metadata Documents are advertised (MCP 2025-11-25 "Client ID Metadata
// Documents", cimd.ts), with the private_key_jwt algorithms their clients may sign with (RFC 8414 §2).
import { SUPPORTED_AUTH_METHODS, SUPPORTED_GRANT_TYPES, SUPPORTED_RESPONSE_TYPES } from '../clients.js';
import { resourceOf } from '../checks/resource-indicator.js';
import { ASSERTION_SIGNING_ALGS } from '../clients/client-assertion.js';

export const PRM_PATH = '/.well-known/oauth-protected-resource';
export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const REGISTER_PATH = '/oauth/register';
export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/oauth/token';

/**
 * RFC 9728 §3.3: `resource` is exactly the identifier the well-known path was inserted into — `<base>/mcp` for
 * …/oauth-protected-resource/mcp (the one the 401 challenge names), `<base>` for the root document. Clients
 * that discover from the origin (Gemini CLI's fallback) refuse a root document naming another resource.
 */
export function protectedResourceMetadata(base: string, root = false): Record<string, unknown> {
  return {
    resource: root ? base : resourceOf(base),
    authorization_servers: [base],
    bearer_methods_supported: ['header'],
    resource_name: 'workbench-mcp',
  };
}

export function authorizationServerMetadata(base: string, documents = true): Record<string, unknown> {
  return {
    issuer: base,
    authorization_endpoint: base + AUTHORIZE_PATH,
    token_endpoint: base + TOKEN_PATH,
    registration_endpoint: base + REGISTER_PATH,
    response_types_supported: [...SUPPORTED_RESPONSE_TYPES],
    response_modes_supported: ['query'],
    grant_types_supported: [...SUPPORTED_GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...SUPPORTED_AUTH_METHODS],
    token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_SIGNING_ALGS],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: documents,
  };
}
