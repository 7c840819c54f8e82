// Which client a client_id names, wherever it is defined: the pre-registered client, a dynamic registration,
// or — for an https client_id not registered here — a Client ID Metadata Document fetched through cimd.ts.
// Every endpoint that needs the client (authorize GET and POST, token) asks here, so the three kinds behave
// alike after this point.
import { isCimdClientId, type ClientLookup } from './cimd.js';
import type { OAuthContext } from '../context.js';

/** The client, the reason its document cannot be used, or undefined when nothing is known by that id. */
export async function lookupClient(
  ctx: OAuthContext,
  clientId: string | undefined,
): Promise<ClientLookup | undefined> {
  if (clientId === undefined) return undefined;
  const registered = ctx.clients.get(clientId);
  if (registered) return { ok: true, client: registered };
  if (isCimdClientId(clientId)) return ctx.cimd.resolve(clientId);
  return undefined;
}
