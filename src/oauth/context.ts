// Everything the OAuth endpoints share, built once per process by server.ts (one runtime owns all state,
// docs/design-notes.md#one-workspace-one-runtime). Handlers receive it; none of them holds state of its own.
import type { ConsoleSignIns } from './grants/console-signin.js';
import type { ActivityFeed } from '../core/activity.js';
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { AccessTokens } from './grants/access-tokens.js';
import type { CimdResolver } from './clients/cimd.js';
import type { ClientAssertions } from './clients/client-assertion.js';
import type { PasswordAttempts } from './grants/attempts.js';
import type { ClientRegistry } from './clients.js';
import type { CodeStore } from './grants/codes.js';
import type { GrantStore } from './grants/grants.js';
import type { PendingRequests } from './grants/pending.js';
import type { RandomSource } from './secrets.js';

export interface OAuthContext {
  clients: ClientRegistry;
  /** Clients identified by a Client ID Metadata Document (cimd.ts). */
  cimd: CimdResolver;
  /** private_key_jwt assertions of metadata-document clients: their keys and the jti already seen. */
  assertions: ClientAssertions;
  pending: PendingRequests;
  attempts: PasswordAttempts;
  codes: CodeStore;
  grants: GrantStore;
  tokens: AccessTokens;
  /** The operator password of the authorization page. */
  password: string;
  /** How long a wrong password's answer is held (the per-attempt delay, attempts.ts). */
  passwordDelayMs: number;
  clock: Clock;
  random: RandomSource;
  /** The public origin of a request (http/base-url.ts). */
  baseUrl: (req: IncomingMessage) => string;
  allowedOrigins: readonly string[];
  log?: Logger;
  /** The operator's console, when on: "Approve from the console" on the authorization page (console-signin.ts). */
  signIns?: ConsoleSignIns;
  /** The console's activity list, when on: wrong passwords show there beside refused tokens. */
  activity?: ActivityFeed;
}
