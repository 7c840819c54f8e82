// The prepared context of the authorization_code grant checks: the token request, the client it
// authenticated as, what presenting the code did (codes.ts: fresh, spent or unknown) and the time.
import type { Client } from '../clients.js';
import type { Redemption } from '../grants/codes.js';
import type { Form } from '../http-io.js';

export interface CodeCtx {
  form: Form;
  client: Client;
  redemption: Redemption;
  now: number;
  /** The public origin this token request arrived on. */
  base: string;
}
