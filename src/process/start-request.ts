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
  // One string, encoded once into the buffer that also holds the head: it is built on every command's and
  // every git or ripgrep run's path.
  let text = `${cwd}\0`;
  for (const a of argv) text += `${a}\0`;
  const keys = Object.keys(env);
  for (const k of keys) text += `${k}=${env[k]}\0`;
  const headLength = pin ? 32 : 16;
  const bodyLength = Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(headLength + bodyLength);
  out.write(pin ? 'WBX2' : 'WBX1', 0, 'latin1');
  out.writeUInt32LE(bodyLength, 4);
  out.writeUInt32LE(argv.length, 8);
  out.writeUInt32LE(keys.length, 12);
  if (pin) {
    out.writeBigUInt64LE(pin.dev, 16);
    out.writeBigUInt64LE(pin.ino, 24);
  }
  out.write(text, headLength, 'utf8');
  return out;
}
