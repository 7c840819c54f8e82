// The network of `safe` and `trusted` commands (docs/tools.md#network-in-safe-mode,
// docs/security-model.md#network-per-mode), for the registry: starts the filtering proxy (net-proxy.ts) on a
// unix socket in the runtime directory when the bridge program was built (scripts/build-native.mjs), names
// what each sandbox binds, gives each command its own proxy credential and environment, and turns the proxy's
// decisions into audit lines and `blocked` notes on the command that asked. `safe` gets the allow-list;
// `trusted` every host name (`*`) — both still refuse loopback, private, link-local and metadata upstream
// addresses unless SERVICE_NETWORK_ALLOW_PRIVATE names them, and both honour SERVICE_NETWORK_DENY.
// A grant from the user (docs/design-notes.md "Permission grants") is a rule for one command's credential —
// the host names its earlier run of the same call was refused — revoked when the command ends; no host socket
// ever enters a sandbox. Refused hosts are remembered per call (bounded, BLOCK_TTL_MS) so that the same call,
// sent again by a client that can ask its user, asks for exactly those names.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/load.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/log.js';
import { DEFAULT_ALLOW } from './net-allow.js';
import type { NetDecision } from './net-decision.js';
import { BRIDGE_PORT, NetProxy } from './net-proxy.js';
import type { RuntimeDirs } from '../runtime-dir.js';
import type { NetMounts } from '../sandbox/sandbox-mounts.js';
import { builtProgram, placeProgram } from '../native.js';
import { randomBase64url } from '../../core/random.js';

/** Calls whose refused hosts are remembered, and for how long. */
const MAX_BLOCKED_CALLS = 64;
export const BLOCK_TTL_MS = 15 * 60_000;

export interface NetAuditEvent {
  host: string;
  port: number;
  method: string;
  allowed: boolean;
  reason?: string;
  address?: string;
  command_id?: string;
  granted?: boolean;
}

export interface NetHost {
  readonly config: Config;
  readonly dirs: RuntimeDirs;
  readonly clock: Clock;
  readonly log: Logger;
  /** The audit log, when one is configured: every proxy decision is a line. */
  readonly audit?: { network(e: NetAuditEvent): void } | undefined;
}

/** What the proxy needs of a command: its id, and where its refusals go (commands/ turns them into notes). */
export interface NetClient {
  readonly id: string;
  refused(d: NetDecision): void;
}

interface Attached {
  cmd: NetClient;
  token: string;
  callKey: string | undefined;
}

export class NetAccess {
  private proxy: NetProxy | undefined;
  private mountsValue: NetMounts | { unavailable: string } | undefined;
  private readonly byId = new Map<string, Attached>();
  private readonly refused = new Map<string, { hosts: Set<string>; at: number }>();

  constructor(private readonly host: NetHost) {}

  /** `safe`/`trusted`: starts the proxy once and names what each sandbox binds, or why there is no network. */
  mounts(): NetMounts | { unavailable: string } {
    this.mountsValue ??= this.open();
    return this.mountsValue;
  }

  /**
   * Where any part fails, the answer says why and how to fix it: the sandboxes then have no network at all
   * (sandbox.ts, fail closed). Socket paths of any length work (socket-path.ts, native/wb-sunpath.h).
   */
  private open(): NetMounts | { unavailable: string } {
    const bridge = builtProgram('wb-netbridge');
    if (!bridge)
      return {
        unavailable:
          'the bridge program dist/native/wb-netbridge was not built (no C compiler when `npm run build` ran); fix: install a C compiler (cc) and run `npm run build`',
      };
    // The socket and a copy of the bridge share one directory, so a sandbox binds it with one mount (each
    // read-only bind costs bwrap a walk of the mount table: two of them added ~3.6 ms to every start).
    const dir = path.join(this.host.dirs.root, 'net');
    const socket = path.join(dir, 'proxy.sock');
    const fix = `fix: make the runtime directory writable by the server's user (SERVICE_RUNTIME_ROOT)`;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      return { unavailable: `the bridge could not be placed in ${dir} (${(e as Error).message}); ${fix}` };
    }
    const bridgeAt = placeProgram('wb-netbridge', dir);
    if (!bridgeAt) return { unavailable: `the bridge could not be copied into ${dir}; ${fix}` };
    // wb-exec beside the bridge, where every sandbox sees it; without it commands start the usual way.
    const starterAt = placeProgram('wb-exec', dir);
    const c = this.host.config;
    // The data plane runs outside every sandbox, so from a copy in the runtime directory's root (native.ts);
    // its hand-over socket lies there too, out of the sandboxes' sight.
    const relayAt = placeProgram('wb-netrelay', this.host.dirs.root);
    const serverPath = path.join(this.host.dirs.root, 'proxy-server.sock');
    const proxy = new NetProxy({
      socketPath: socket,
      rules: {
        allow: c.permissionMode === 'trusted' ? ['*'] : [...DEFAULT_ALLOW, ...c.networkAllow],
        deny: c.networkDeny,
        allowPrivate: c.networkAllowPrivate,
      },
      testResolve: c.testResolve,
      clock: this.host.clock,
      onDecision: (d) => this.decided(d),
      ...(relayAt ? { relay: { program: relayAt, serverPath } } : {}),
      onNotice: (message) => this.host.log.warn(message),
    });
    try {
      proxy.listen();
    } catch (e) {
      void proxy.close();
      return { unavailable: `the proxy could not listen on ${socket} (${(e as Error).message}); ${fix}` };
    }
    this.proxy = proxy;
    return { socket, dir, bridgeAt, starterAt };
  }

  /** The argv that starts the bridge ahead of a command, when the proxy runs (net-proxy.ts). */
  bridgePrefix(): string[] | undefined {
    const m = this.mountsValue;
    return this.proxy && m && 'socket' in m ? [m.bridgeAt, String(BRIDGE_PORT), m.socket, '--'] : undefined;
  }

  /**
   * A command's own proxy credential: the environment that points it at the proxy and the argv prefix that
   * starts the bridge inside its sandbox. `grant`: host names the user allowed for this one command.
   */
  attach(
    cmd: NetClient,
    callKey: string | undefined,
    grant: readonly string[],
  ): { proxyUrl: string; prefix: string[] } {
    const m = this.mountsValue;
    const proxy = this.proxy;
    if (!proxy || !m || !('socket' in m)) throw new Error('the proxy is not running');
    const token = randomBase64url(18);
    proxy.register(token, cmd.id);
    if (grant.length) proxy.grant(token, grant);
    this.byId.set(cmd.id, { cmd, token, callKey });
    return {
      proxyUrl: `http://wb:${token}@127.0.0.1:${BRIDGE_PORT}`,
      prefix: this.bridgePrefix() ?? [],
    };
  }

  /** The command ended: its credential and any grant go with it. */
  detach(cmd: NetClient): void {
    const a = this.byId.get(cmd.id);
    if (!a) return;
    this.byId.delete(cmd.id);
    this.proxy?.revoke(a.token);
  }

  /** Host names the allow-list refused to an earlier run of the same call (recently), for a grant. */
  refusedFor(callKey: string): string[] {
    this.sweep();
    return [...(this.refused.get(callKey)?.hosts ?? [])];
  }

  close(): Promise<void> {
    this.byId.clear();
    return this.proxy?.close() ?? Promise.resolve();
  }

  private decided(d: NetDecision): void {
    this.host.audit?.network({
      host: d.host,
      port: d.port,
      method: d.method,
      allowed: d.allowed,
      reason: d.reason,
      address: d.address,
      command_id: d.commandId,
      granted: d.granted,
    });
    this.host.log.debug('proxy decision', { ...d });
    if (d.allowed || !d.commandId) return;
    const a = this.byId.get(d.commandId);
    if (!a) return;
    a.cmd.refused(d);
    if (d.reason === 'not_allowed' && a.callKey) this.remember(a.callKey, d.host);
  }

  private remember(callKey: string, host: string): void {
    this.sweep();
    const now = this.host.clock.now();
    const e = this.refused.get(callKey);
    if (e) {
      if (e.hosts.size < 16) e.hosts.add(host);
      e.at = now;
      return;
    }
    if (this.refused.size >= MAX_BLOCKED_CALLS)
      this.refused.delete(this.refused.keys().next().value as string);
    this.refused.set(callKey, { hosts: new Set([host]), at: now });
  }

  private sweep(): void {
    const now = this.host.clock.now();
    for (const [k, e] of this.refused) if (now - e.at > BLOCK_TTL_MS) this.refused.delete(k);
  }
}
