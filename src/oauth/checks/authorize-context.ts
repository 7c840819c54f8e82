// The prepared context every authorization-request check reads: the request parameters (query of GET),
// the client they name (looked up once by the endpoint) and this server's public origin for the request.
import type { Client } from '../clients.js';
import type { Form } from '../http-io.js';

export interface AuthorizeCtx {
  form: Form;
  client: Client | undefined;
  /** The public origin (docs/oauth.md#metadata); the resource is `<base>/mcp`. */
  base: string;
}
