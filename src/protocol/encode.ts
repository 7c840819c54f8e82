// JSON encoding of responses where one long string appears twice (read_file's content is both the model's text
// and structuredContent.content): each distinct long string is escaped once and spliced in at every place.
// Splice points are marked with a per-process random nonce, so no content can be mistaken for one.
import { randomBytes } from 'node:crypto';

const LONG = 8 * 1024;
const NONCE = randomBytes(12).toString('hex');
const MARK = new RegExp(`"\\\\u0000${NONCE}:(\\d+)\\\\u0000"`, 'g');

export function encodeResponse(value: unknown): string {
  const seen = new Map<string, number>();
  const pieces: string[] = [];
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'string' || v.length < LONG) return v;
    let i = seen.get(v);
    if (i === undefined) {
      i = pieces.length;
      seen.set(v, i);
      pieces.push(JSON.stringify(v));
    }
    return `\u0000${NONCE}:${i}\u0000`;
  });
  if (pieces.length === 0) return json;
  return json.replace(MARK, (_m, i: string) => pieces[Number(i)] as string);
}
