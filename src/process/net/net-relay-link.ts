// The server's side of native/wb-netrelay.c, the filtering proxy's data plane (net-proxy.ts): starts it, reads
// its frames (a CONNECT head to decide, a connection that closed), and sends the proxy's answers (connect to
// this checked address, or write this refusal, or close). Frames both ways: u32 length of what follows, u8
// type, u32 id, payload; little-endian. A head comes with its origin: which sandbox's listener the connection
// was accepted on (numbered by this relay from 1), 0 for one made on the proxy's unix socket itself.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** The longest frame either side sends (the relay's limit). */
const FRAME_MAX = 64 * 1024;
/** How long the relay may take to listen before the server goes on without it. */
const START_MS = 5_000;

export interface RelayEvents {
  /** A CONNECT head (up to and with its empty line) from connection `id`, accepted on listener `origin`. */
  head(id: number, head: Buffer, origin: number): void;
  /** Connection `id`, whose head came, is closed. */
  closed(id: number): void;
  /** The relay ended after it was listening; every connection it held is gone. */
  exit(why: string): void;
}

export class RelayLink {
  private pending: Buffer = Buffer.alloc(0);
  private listening = false;
  private stopped = false;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
    private readonly events: RelayEvents,
  ) {}

  /**
   * Starts `program` listening on `listenPath` and handing other requests to `serverPath`; resolves once it
   * listens, rejects (with what it said) when it cannot.
   */
  static start(
    program: string,
    listenPath: string,
    serverPath: string,
    events: RelayEvents,
  ): Promise<RelayLink> {
    const child = spawn(program, [listenPath, serverPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    const link = new RelayLink(child, events);
    let said = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (said = (said + d).slice(-500)));
    child.stdin.on('error', () => {});
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`wb-netrelay did not listen within ${START_MS} ms`));
      }, START_MS);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        const why = `wb-netrelay ended (${signal ?? `status ${code}`})${said ? `: ${said.trim()}` : ''}`;
        if (!link.listening) reject(new Error(why));
        else if (!link.stopped) events.exit(why);
      });
      child.stdout.on('data', (d: Buffer) =>
        link.read(d, () => {
          clearTimeout(timer);
          resolve(link);
        }),
      );
    });
  }

  /** Connect `id` to the checked `address`:`port`; `fail` is what the client reads when that fails. */
  connect(id: number, address: string, port: number, fail: string): void {
    const head = Buffer.alloc(2);
    head.writeUInt16LE(port);
    this.send('C', id, Buffer.concat([head, Buffer.from(`${address}\0`, 'latin1'), Buffer.from(fail)]));
  }

  /** Write `answer` to `id`, then close it. */
  reply(id: number, answer: string): void {
    this.send('R', id, Buffer.from(answer));
  }

  /** Close `id` now. */
  kill(id: number): void {
    this.send('K', id, Buffer.alloc(0));
  }

  stop(): void {
    this.stopped = true;
    this.child.kill('SIGKILL');
  }

  /** Whether the relay's process has ended (its exit may not have been reported yet). */
  get ended(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The relay's process id (tests). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  private send(type: string, id: number, payload: Buffer): void {
    if (this.stopped) return;
    const h = Buffer.alloc(9);
    h.writeUInt32LE(5 + payload.length, 0);
    h.write(type, 4, 'latin1');
    h.writeUInt32LE(id, 5);
    // The answers to a burst of heads (decided in the same turn of the event loop) leave as one write.
    if (!this.child.stdin.writableCorked) {
      this.child.stdin.cork();
      process.nextTick(() => this.child.stdin.uncork());
    }
    this.child.stdin.write(payload.length ? Buffer.concat([h, payload]) : h);
  }

  private read(d: Buffer, onListening: () => void): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, d]) : d;
    let off = 0;
    while (this.pending.length - off >= 4) {
      const len = this.pending.readUInt32LE(off);
      if (len < 5 || len > FRAME_MAX) {
        this.stop();
        this.events.exit(`wb-netrelay sent a frame of ${len} bytes`);
        return;
      }
      if (this.pending.length - off - 4 < len) break;
      const type = String.fromCharCode(this.pending[off + 4] as number);
      const id = this.pending.readUInt32LE(off + 5);
      const payload = this.pending.subarray(off + 9, off + 4 + len);
      off += 4 + len;
      if (type === 'L' && !this.listening) {
        this.listening = true;
        onListening();
      } else if (type === 'H' && payload.length >= 4)
        this.events.head(id, Buffer.from(payload.subarray(4)), payload.readUInt32LE(0));
      else if (type === 'X') this.events.closed(id);
    }
    this.pending = this.pending.subarray(off);
  }
}
/** The target and credential of a CONNECT head as the relay sends it; undefined when it is not one. */
export function parseConnectHead(head: Buffer): { target: string; auth?: string } | undefined {
  const lines = head.toString('latin1').split('\r\n');
  const m = /^CONNECT (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? '');
  if (!m) return undefined;
  let auth: string | undefined;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'proxy-authorization')
      auth = line.slice(colon + 1).trim();
  }
  return { target: m[1] as string, ...(auth !== undefined ? { auth } : {}) };
}
