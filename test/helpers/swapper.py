#!/usr/bin/env python3
# The attacker of the swap-race tests: exchanges two paths with
# renameat2(RENAME_EXCHANGE) in a tight loop. Bounded: stops after MAX_SECONDS or on SIGTERM/SIGINT, always
# leaves the paths as it found them (an even number of swaps) and prints {"swaps": N} as its last line.
# Usage: swapper.py PATH_A PATH_B MAX_SECONDS   (prints "ready" once swapping has started)
import ctypes
import json
import os
import platform
import signal
import sys
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2
# renameat2 syscall numbers, for a libc without the wrapper (glibc < 2.28).
SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "riscv64": 276, "ppc64le": 357, "s390x": 347}

libc = ctypes.CDLL(None, use_errno=True)


def exchanger():
    if hasattr(libc, "renameat2"):
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        return lambda a, b: fn(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    nr = SYS_RENAMEAT2[platform.machine()]
    sc = libc.syscall
    return lambda a, b: sc(nr, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)


def main():
    a, b, max_seconds = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), float(sys.argv[3])
    swap = exchanger()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    swaps = [0]

    def once():
        if swap(a, b) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "renameat2(RENAME_EXCHANGE): " + os.strerror(err))
        swaps[0] += 1

    once()
    once()
    print("ready", flush=True)
    deadline = time.monotonic() + max_seconds
    try:
        while not stop and time.monotonic() < deadline:
            for _ in range(32):  # an even batch: the paths are back in place after each one
                once()
    finally:
        if swaps[0] % 2:
            once()
        print(json.dumps({"swaps": swaps[0]}), flush=True)


if __name__ == "__main__":
    main()
