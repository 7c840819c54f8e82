// What a message's JSON may cost before JSON.parse runs on it (docs/http.md#order-of-checks). JSON.parse is
// one synchronous native call: a 4 MiB body of a million small arrays or objects, nested or side by side,
// holds the event loop for hundreds of milliseconds, while the same 4 MiB as one string (a patch, a file's
// content) parses in a few. So a cheap scan counts, outside strings, how deep the body nests and how many
// values it holds, and a body past either limit is refused unparsed. A real MCP message nests a few levels
// and holds a few dozen values; large content travels as strings, which the scan skips with indexOf.

/** Deepest nesting of objects and arrays a message may have. */
export const MAX_JSON_DEPTH = 64;
/** Most values (objects, arrays, strings, numbers, literals, roughly) a message may hold. */
export const MAX_JSON_VALUES = 100_000;

export type ShapeVerdict = { ok: true } | { ok: false; reason: 'depth' | 'values' };

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const OPEN_ARRAY = 91;
const CLOSE_OBJECT = 125;
const CLOSE_ARRAY = 93;
const COMMA = 44;

/** The scan: strings skipped (escapes honoured), brackets and commas outside them counted. Never throws. */
export function jsonShape(text: string): ShapeVerdict {
  let depth = 0;
  let values = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) return { ok: false, reason: 'depth' };
      if (++values > MAX_JSON_VALUES) return { ok: false, reason: 'values' };
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COMMA && ++values > MAX_JSON_VALUES) {
      return { ok: false, reason: 'values' };
    }
  }
  return { ok: true };
}

/** Index of the quote that closes the string opened at `open` (text.length when it never closes). */
function stringEnd(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}
