// Unix socket paths of any length for the server's own listeners (net-proxy-endpoints.ts): a path that fits
// sockaddr_un (107 bytes and the NUL) is used as it is; a longer one — a runtime root deep in the file system —
// is bound through its directory, opened once and kept open, as /proc/self/fd/<fd>/<name>, which the kernel
// resolves like the full path. native/wb-sunpath.h does the same for the bridge and the relay
// (docs/security-model.md#network-per-mode).
import { closeSync, constants, openSync } from 'node:fs';
import path from 'node:path';

/** Unix socket paths longer than this do not fit sockaddr_un (108 bytes with the NUL). */
export const MAX_SOCKET_PATH = 107;

export class SocketPaths {
  private readonly dirs = new Map<string, number>();

  /** The address to bind or connect `p` by: `p` itself, or its short form through its directory. */
  at(p: string): string {
    if (Buffer.byteLength(p) <= MAX_SOCKET_PATH) return p;
    const dir = path.dirname(p);
    let fd = this.dirs.get(dir);
    if (fd === undefined) {
      fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
      this.dirs.set(dir, fd);
    }
    const short = `/proc/self/fd/${fd}/${path.basename(p)}`;
    if (Buffer.byteLength(short) > MAX_SOCKET_PATH)
      throw new Error(`the socket name ${path.basename(p)} is too long for a unix socket`);
    return short;
  }

  /** The directories' descriptors: only once every listener bound through them is closed (it unlinks by it). */
  close(): void {
    for (const fd of this.dirs.values()) closeSync(fd);
    this.dirs.clear();
  }
}
