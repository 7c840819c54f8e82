// The tunnel block shows a QR code of the URL when stdout is a terminal. The encoder (`uqr`)
// is checked by decoding nothing but its shape: a square of Unicode half blocks whose width grows with the
// data, quiet border included, and the same URL always gives the same picture.
import { describe, expect, it } from 'vitest';
import { encode } from 'uqr';
import { qrCode } from '../../src/cli/tunnel/print.js';

describe('tunnel QR code', () => {
  it('renders the URL as half blocks, one text row per two modules, border of 2', async () => {
    const url = 'https://fancy-words-here.trycloudflare.com/mcp';
    const qr = await qrCode(url);
    const rows = qr.split('\n').filter((r) => r.length > 0);
    const size = encode(url, { border: 2 }).size; // modules per side, with the border
    expect(rows.every((r) => [...r].length === size)).toBe(true);
    expect(rows.length).toBe(Math.ceil(size / 2));
    expect(qr).toMatch(/[▀▄█]/);
    expect(await qrCode(url)).toBe(qr);
    expect(await qrCode(url + '?x')).not.toBe(qr);
  });
});
