// What the filtering proxy (net-proxy.ts) decided about one request, as the audit log, the command's `blocked`
// note (blocked.ts) and the console see it, and what a refused client reads in the 403/502/503 body. Hosts and
// addresses are canonical (src/config/ip-address.ts): the refusal names the address as the proxy judged it.
import { isIP } from 'node:net';

export type Refusal =
  | 'not_allowed'
  | 'denied'
  | 'private_address'
  | 'unresolved'
  | 'unreachable'
  | 'busy'
  | 'command_busy'
  | 'foreign_credential'
  | 'bad_request';

/** Connections through the proxy one command may hold at once (below MAX_UPSTREAM, net-proxy.ts). */
export const MAX_PER_COMMAND = 64;

export interface NetDecision {
  host: string;
  port: number;
  /** `CONNECT` or the HTTP method of an absolute-URI request. */
  method: string;
  allowed: boolean;
  reason?: Refusal;
  /** The address connected to (allowed), or the one refused (private_address). */
  address?: string;
  /** What the address is, for a private_address refusal (loopback, private, metadata, …). */
  kind?: string;
  /** For an IPv6 form carrying an IPv4 address, which form and which address (`IPv4-mapped 127.0.0.1`). */
  via?: string;
  /** The command whose credential came with the request; undefined without one. */
  commandId?: string;
  /** Allowed only because the user granted it to this command. */
  granted?: boolean;
}

/** What a refused request reads: which host, why, and what would allow it. */
export function refusalBody(d: NetDecision): string {
  const hp = `${isIP(d.host) === 6 ? `[${d.host}]` : d.host}:${d.port}`;
  const lines: Record<Refusal, string> = {
    not_allowed:
      `${d.host} is not on this server's network allow-list (safe mode: package registries only).\n` +
      `One command: request_permissions {"tool_name":"exec_command","permission":"network","reason":"${d.host}"}; ` +
      `always: the operator adds it to SERVICE_NETWORK_ALLOW.`,
    denied: `${d.host} is on this server's SERVICE_NETWORK_DENY list; only the operator can change that.`,
    private_address:
      `${d.host} ${d.address === d.host ? 'is' : 'resolves to'} ${d.address} ` +
      `(${d.kind}${d.via ? `: ${d.via} inside` : ''}); loopback, private and metadata addresses are refused, ` +
      `however they are spelled. The operator can allow it with SERVICE_NETWORK_ALLOW_PRIVATE=${d.host}.`,
    unresolved: `${d.host} does not resolve.`,
    unreachable: `${hp} could not be reached.`,
    busy: `too many connections through the proxy at once; try again shortly.`,
    command_busy:
      `this command already holds ${MAX_PER_COMMAND} connections through the proxy, its per-command limit; ` +
      `close some (fewer parallel downloads) and try again.`,
    foreign_credential: `this proxy credential belongs to another command's sandbox; use the HTTPS_PROXY this command was given.`,
    bad_request: `malformed proxy request.`,
  };
  return `workbench-mcp proxy refused ${hp}: ${lines[d.reason ?? 'bad_request']}\n`;
}
