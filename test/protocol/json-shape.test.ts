// The scan before JSON.parse (src/protocol/json-shape.ts): depth and values counted outside strings only,
// escapes honoured, limits exact; parseMessage answers -32600 with the limit, never parsing such a body.
import { describe, expect, it } from 'vitest';
import { INVALID_REQUEST } from '../../src/protocol/errors.js';
import { jsonShape, MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../src/protocol/json-shape.js';
import { parseMessage } from '../../src/protocol/jsonrpc.js';

const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);

describe('jsonShape', () => {
  it('accepts MAX_JSON_DEPTH levels and refuses one more', () => {
    expect(jsonShape(nest(MAX_JSON_DEPTH))).toEqual({ ok: true });
    expect(jsonShape(nest(MAX_JSON_DEPTH + 1))).toEqual({ ok: false, reason: 'depth' });
    expect(jsonShape(`{"a":${nest(MAX_JSON_DEPTH - 1)}}`)).toEqual({ ok: true });
  });

  it('depth is the deepest point, not the count of containers side by side', () => {
    expect(jsonShape(`[${Array(5000).fill('{"a":[1]}').join(',')}]`)).toEqual({ ok: true });
  });

  it('counts values: MAX_JSON_VALUES pass, more are refused, flat or nested', () => {
    expect(
      jsonShape(
        `[${Array(MAX_JSON_VALUES - 1)
          .fill('0')
          .join(',')}]`,
      ),
    ).toEqual({ ok: true });
    expect(
      jsonShape(
        `[${Array(MAX_JSON_VALUES + 1)
          .fill('0')
          .join(',')}]`,
      ),
    ).toEqual({
      ok: false,
      reason: 'values',
    });
    expect(jsonShape(`[${Array(MAX_JSON_VALUES).fill('[]').join(',')}]`)).toEqual({
      ok: false,
      reason: 'values',
    });
  });

  it('brackets, commas and escaped quotes inside strings do not count', () => {
    const s = JSON.stringify({ a: `${'[{,'.repeat(200_000)}\\"\\\\"[[[`, b: '\\', c: '"' });
    expect(jsonShape(s)).toEqual({ ok: true });
    // After an escaped backslash the quote closes the string: the bracket after it counts.
    expect(jsonShape(`["\\\\", ${nest(MAX_JSON_DEPTH)}]`)).toEqual({ ok: false, reason: 'depth' });
    expect(jsonShape(`["\\"${nest(MAX_JSON_DEPTH)}"]`)).toEqual({ ok: true });
  });

  it('an unterminated string or unbalanced brackets are left to JSON.parse', () => {
    expect(jsonShape('["abc')).toEqual({ ok: true });
    expect(jsonShape(']]]]')).toEqual({ ok: true });
  });
});

describe('parseMessage', () => {
  it('refuses too deep or too many values with -32600, status 400 and the limit, per framing', () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${nest(MAX_JSON_DEPTH)}}}`;
    const r = parseMessage(deep);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ code: INVALID_REQUEST, status: 400, data: { reason: 'too_deep' } });
    expect(r.error.message).toMatch(
      /^Invalid Request: the body nests objects and arrays more than 64 levels/,
    );
    const many = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[${'0,'.repeat(MAX_JSON_VALUES)}0]}}`;
    const m = parseMessage(many, 'stdio');
    expect(m.ok).toBe(false);
    if (m.ok) return;
    expect(m.error.data).toEqual({ reason: 'too_many_values', max: MAX_JSON_VALUES });
    expect(m.error.message).toMatch(
      /^Invalid Request: the line holds more than 100000 JSON values; send large/,
    );
  });

  it('a large message made of strings parses as before', () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'apply_patch', arguments: { patch: '[{"x": 1},'.repeat(300_000) } },
    });
    const r = parseMessage(text);
    expect(r.ok && r.msg.kind).toBe('request');
  });
});
