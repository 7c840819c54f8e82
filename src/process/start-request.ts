// The request native/wb-exec reads on its standard input, the last program of a sandbox or tool jail prepared
// ahead (process/spawner/prepared-sandbox.ts, process/jail/prepared-jail.ts): "WBX1", three little-endian u32
// (length, argc, envc) and the strings; "WBX2" adds the device and inode the directory must have (u64 each).

/** The directory's identity, as fstat gives it (bigint: inode numbers may exceed 2^53). */
export interface DirIdentity {
  dev: bigint;
  ino: bigint;
}

export function startRequest(
  cwd: string,
  argv: readonly string[],
  env: Record<string, string>,
  pin?: DirIdentity,
): Buffer {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const body = Buffer.from([cwd, ...argv, ...vars].map((s) => `${s}\0`).join(''));
  const head = Buffer.alloc(pin ? 32 : 16);
  head.write(pin ? 'WBX2' : 'WBX1', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  head.writeUInt32LE(argv.length, 8);
  head.writeUInt32LE(vars.length, 12);
  if (pin) {
    head.writeBigUInt64LE(pin.dev, 16);
    head.writeBigUInt64LE(pin.ino, 24);
  }
  return Buffer.concat([head, body]);
}
