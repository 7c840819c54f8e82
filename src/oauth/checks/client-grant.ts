// The client registered the grant it is using (RFC 6749 §4.1.2.1 and §5.2 unauthorized_client; RFC 7591 §2
// grant_types). Authorization requests need authorization_code; token requests name their grant_type.
import type { Client, GrantType } from '../clients.js';
import { oauthError, type OAuthError } from '../errors.js';

export function checkClientGrant(client: Client, grant: GrantType): OAuthError | undefined {
  if (client.grantTypes.includes(grant)) return undefined;
  return oauthError(
    'unauthorized_client',
    `This client did not register the ${grant} grant (its grant_types: ${client.grantTypes.join(', ')})`,
  );
}
