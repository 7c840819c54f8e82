// Proof of identity for `workbench-mcp doctor` (docs/remote-access.md#check-a-running-server): before the
// doctor sends a token or a password to an address, it asks the server there to prove that it knows that
// secret, without the secret crossing the wire: a nonce goes out, HMAC-SHA256(secret, nonce + the port the
// server received the request on) comes back, one per secret the server accepts. A program squatting the port
// cannot answer, and one relaying to the real server on another port gets a proof for the wrong port. Public,
// unauthenticated, cheap (one HMAC per secret).
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const PROOF_PATH = '/.well-known/workbench-mcp/proof';
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

/** What the server answers for `secret`, and what the doctor expects. */
export function proofOf(secret: string, nonce: string, port: number): string {
  return createHmac('sha256', secret).update(`workbench-mcp proof v1\n${nonce}\n${port}`).digest('base64url');
}

/** Answers GET PROOF_PATH?nonce=…; false for any other path. */
export function answerProof(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  secrets: readonly string[],
): boolean {
  if (url.pathname !== PROOF_PATH) return false;
  const nonce = url.searchParams.get('nonce') ?? '';
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'GET') {
    res.setHeader('Allow', 'GET');
    send(405, { error: 'method_not_allowed' });
  } else if (!NONCE.test(nonce)) {
    send(400, { error: 'invalid_request', error_description: 'nonce: 16–128 characters of [A-Za-z0-9_-]' });
  } else {
    const port = req.socket.localPort ?? 0;
    send(200, { proofs: secrets.map((s) => proofOf(s, nonce, port)) });
  }
  return true;
}
