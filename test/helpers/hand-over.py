#!/usr/bin/env python3
# Plays a sandbox's bridge (native/wb-netbridge.c) towards the proxy's socket in the relay tests
# (test/net/net-proxy-units.test.ts): sends the hand-over bytes with a descriptor, prints what came back, and
# holds its connection until its standard input closes.
# Usage: hand-over.py SOCKET KIND
#   KIND listener   a TCP listening socket on 127.0.0.1 (what a bridge sends); prints "PORT ANSWER"
#        connected  a TCP socket that is not listening
#        pipe       the read end of a pipe
#        request    a proxy request's first bytes (CONNECT) with a listening socket attached
#        bare       the hand-over bytes without any descriptor
#        two        the hand-over bytes with two listening sockets
#        many       the hand-over bytes with eight
# ANSWER: the byte the relay answered (Y, N), the first bytes of an HTTP answer, or EOF when it closed.
import os
import socket
import sys

HAND_OVER = b"\0wbl"


def main() -> None:
    path, kind = sys.argv[1], sys.argv[2]
    keep = []
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    fds = None
    if kind in ("listener", "request"):
        listener.listen(16)
        fd = listener.fileno()
    elif kind in ("two", "many"):
        listener.listen(16)
        fd = None
        fds = [listener.fileno()]
        for _ in range(1 if kind == "two" else 7):
            extra = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            extra.bind(("127.0.0.1", 0))
            extra.listen(1)
            keep.append(extra)
            fds.append(extra.fileno())
    elif kind == "connected":
        listener.listen(1)
        other = socket.create_connection(("127.0.0.1", port))
        keep.append(other)
        fd = other.fileno()
    elif kind == "pipe":
        r, w = os.pipe()
        keep.append(w)
        fd = r
    else:
        fd = None
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.connect(path)
    u.settimeout(30)
    data = b"CONNECT x.test:1 HTTP/1.1\r\n\r\n" if kind == "request" else HAND_OVER
    if fds is not None:
        socket.send_fds(u, [data], fds)
    elif fd is None:
        u.sendall(data)
    else:
        socket.send_fds(u, [data], [fd])
    if kind == "listener":
        # From here on only the relay holds the listener: when it lets it go, connecting is refused.
        listener.close()
    try:
        got = u.recv(64)
    except OSError as e:
        got = f"error {e.errno}".encode()
    answer = got.decode("latin1").split("\r\n")[0] if got else "EOF"
    print(f"{port} {answer}", flush=True)
    sys.stdin.read()
    u.close()


main()
