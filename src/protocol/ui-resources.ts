// The `ui://` resources of MCP Apps (docs/review-card.md): resources/list and resources/read for a client that
// declared the UI extension (tools/apps.ts); the dispatcher answers any other client as if they did not exist.
// The card's page is read once, when this module loads at start: a command may later rewrite dist/ when the
// server is installed inside its workspace, and the page runs in the person's chat (docs/security-model.md,
// rule B).
import { readFileSync } from 'node:fs';
import { APP_MIME_TYPE, CARD_URI } from '../tools/apps.js';
import { INVALID_PARAMS, ProtocolError, RESOURCE_NOT_FOUND } from './errors.js';

/** The page scripts/bundle.mjs builds from src/apps/card/; undefined in a build without that step. */
const CARD_HTML: string | undefined = (() => {
  try {
    return readFileSync(new URL('../apps/card/changes.html', import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
})();

const CARD = {
  uri: CARD_URI,
  name: 'changes',
  title: 'Review card',
  description: 'The files and coloured hunks of a change, with a revert to its review point.',
  mimeType: APP_MIME_TYPE,
};

/** No connection and no resource domain: the page is one file and talks only to its host. */
const CARD_UI_META = { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true };

export function listResources(): Record<string, unknown> {
  return { resources: CARD_HTML === undefined ? [] : [CARD] };
}

export function readResource(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const uri = params?.uri;
  if (typeof uri !== 'string')
    throw new ProtocolError(INVALID_PARAMS, 'Invalid params: resources/read needs "uri" (string)');
  if (uri !== CARD_URI || CARD_HTML === undefined) {
    throw new ProtocolError(
      RESOURCE_NOT_FOUND,
      `Resource not found: ${uri}; resources/list names the resources`,
      200,
      {
        uri,
      },
    );
  }
  return {
    contents: [{ uri, mimeType: APP_MIME_TYPE, text: CARD_HTML, _meta: { ui: CARD_UI_META } }],
  };
}
