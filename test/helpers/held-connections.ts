// Connections a test holds open in a known state, over raw TCP so the test sees exactly when the server closes
// them (the connection cap): never used, idle after a keep-alive request, or carrying a
// request in flight (headers sent with `Expect: 100-continue`, so the server's "100 Continue" proves it has
// received and admitted them, the body held back until the test releases it).
import net from 'node:net';
import { TEST_TOKEN } from './server.js';

export interface Held {
  socket: net.Socket;
  /** Resolves when the server closed the connection (or it failed). */
  closed: Promise<void>;
  isClosed(): boolean;
}

function hold(socket: net.Socket): Held {
  let done = false;
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      done = true;
      resolve();
    }),
  );
  socket.on('error', () => undefined);
  // Flowing, so the server's FIN is read and 'close' comes (a paused socket never sees its end); every reader
  // below attaches before the data it waits for can arrive.
  socket.resume();
  return { socket, closed, isClosed: () => done };
}

function connect(url: string): Promise<net.Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** Reads from `socket` until `enough(text)` holds; resolves the text so far. */
function readUntil(socket: net.Socket, enough: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (c: Buffer) => {
      text += c.toString('latin1');
      if (enough(text)) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(text);
      }
    };
    const onClose = () => reject(new Error(`connection closed after ${JSON.stringify(text.slice(0, 200))}`));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** True once `text` holds one whole response with a Content-Length body. */
function wholeResponse(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end))?.[1];
  return text.length - end - 4 >= Number(len ?? 0);
}

const status = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

function mcpHead(u: URL, token: string | undefined, extra = ''): string {
  return (
    `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\n` +
    (token ? `Authorization: Bearer ${token}\r\n` : '') +
    `Content-Length: ${Buffer.byteLength(TOOLS_LIST)}\r\n${extra}\r\n`
  );
}

/** A connection that never sends anything; resolves once the TCP handshake is done. */
export async function unused(url: string): Promise<Held> {
  return hold(await connect(url));
}

/**
 * A keep-alive connection left idle after one request: an authenticated tools/list (`token`), or a GET of the
 * server card (no credentials). Resolves with the status once the whole response has arrived.
 */
export async function idleAfter(url: string, token?: string): Promise<Held & { status: number }> {
  const u = new URL(url);
  const socket = await connect(url);
  const h = hold(socket);
  const head = token
    ? mcpHead(u, token) + TOOLS_LIST
    : `GET /.well-known/mcp.json HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`;
  socket.write(head);
  return { ...h, status: status(await readUntil(socket, wholeResponse)) };
}

/**
 * An authenticated tools/list in flight: the headers are sent and admitted (the server answered 100 Continue),
 * the body waits for `finish()`, which sends it and resolves the response status.
 */
export async function inFlight(
  url: string,
  token: string = TEST_TOKEN,
): Promise<Held & { finish(): Promise<number> }> {
  const u = new URL(url);
  const socket = await connect(url);
  const h = hold(socket);
  socket.write(mcpHead(u, token, 'Expect: 100-continue\r\n'));
  await readUntil(socket, (t) => t.includes('\r\n\r\n'));
  return {
    ...h,
    finish: async () => {
      // The 100 Continue was read above; what comes now is the final response.
      const reply = readUntil(socket, wholeResponse);
      socket.write(TOOLS_LIST);
      return status(await reply);
    },
  };
}
