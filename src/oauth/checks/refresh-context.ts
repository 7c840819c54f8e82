// The prepared context of the refresh_token grant checks: the token request, the authenticated client, what
// the refresh token named (grants.ts: current, retired or unknown) and the time.
import type { Client } from '../clients.js';
import type { RefreshLookup } from '../grants/grants.js';
import type { Form } from '../http-io.js';

export interface RefreshCtx {
  form: Form;
  client: Client;
  lookup: RefreshLookup;
  now: number;
  base: string;
}
