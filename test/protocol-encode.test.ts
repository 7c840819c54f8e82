// protocol/encode: responses with a repeated long string encode to exactly what JSON.stringify gives.
import { expect, it } from 'vitest';
import { encodeResponse } from '../src/protocol/encode.js';

it('splices each long string once and equals JSON.stringify', () => {
  const long = 'line "one"\n\u2028\ttab \\ back\u0000nul '.repeat(500);
  const other = 'x'.repeat(9000);
  const v = { a: long, b: [long, { c: other, d: long }], short: '\u0000wb:0\u0000', n: 1 };
  expect(encodeResponse(v)).toBe(JSON.stringify(v));
  expect(JSON.parse(encodeResponse(v))).toEqual(v);
});
