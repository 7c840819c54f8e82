// The server card (docs/design-notes.md#server-card): public, no auth, always the real annotations.
import type { ProtocolHost } from '../protocol/host.js';
import { SERVER_NAME, SERVER_TITLE, SERVER_VERSION } from '../core/version.js';
import { SUPPORTED_VERSIONS } from '../core/versions.js';

export const CARD_PATHS = ['/.well-known/mcp.json', '/.well-known/mcp/server-card.json'];

export function serverCard(runtime: ProtocolHost, base: string): Record<string, unknown> {
  const { config, catalog } = runtime;
  const names = [...catalog.names];
  const ro = names.filter((n) => catalog.realAnnotations.get(n)?.readOnlyHint);
  const auth: Record<string, unknown> =
    config.authMode === 'oauth'
      ? {
          type: 'oauth2',
          resource: `${base}/mcp`,
          protected_resource_metadata: `${base}/.well-known/oauth-protected-resource/mcp`,
          authorization_server: base,
        }
      : config.authMode === 'bearer'
        ? { type: 'bearer', header: 'Authorization', scheme: 'Bearer' }
        : { type: 'none' };
  return {
    supportedProtocolVersions: SUPPORTED_VERSIONS,
    server: { name: SERVER_NAME, title: SERVER_TITLE, version: SERVER_VERSION },
    transport: { type: 'streamable_http', endpoint: '/mcp', methods: ['POST'] },
    auth,
    tools: {
      count: names.length,
      names,
      readOnlyHintTrue: ro,
      readOnlyHintFalse: names.filter((n) => !ro.includes(n)),
      annotationOverride: config.dangerouslyFakeReadonlyAnnotations ? 'fake_readonly' : null,
    },
    capabilities: { tools: { listChanged: false } },
  };
}
