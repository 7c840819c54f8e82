// The receiving half of the descriptor-passing attacks on the proxy (test/net/net-failclosed-suite.ts,
// test/net/net-trusted-suite.ts): a Python script that takes a connected socket from another command over a
// Unix socket, waits for the test's signal, then tries to use it.

/**
 * Listens on the Unix socket `sock` (in its working directory), prints "listening", receives one descriptor
 * (SCM_RIGHTS) as the socket `s` and prints "received", waits up to 120 s for the file `go`, runs `before`
 * (Python lines), then sends `payload` (a Python bytes expression) on `s`: prints "reply <bytes>" or
 * "dead <errno>".
 */
export function fdReceiverPy(o: { sock: string; go: string; payload: string; before?: string }): string {
  return `
import array, base64, os, socket, sys, time, urllib.parse
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("${o.sock}"); srv.listen(1)
print("listening", flush=True)
c, _ = srv.accept()
msg, anc, flags, addr = c.recvmsg(16, socket.CMSG_SPACE(4))
s = socket.socket(fileno=array.array("i", anc[0][2][:4])[0])
print("received", flush=True)
end = time.time() + 120
while not os.path.exists("${o.go}") and time.time() < end: time.sleep(0.05)
${o.before ?? ''}
s.settimeout(30)
try:
    s.sendall(${o.payload})
    print("reply", repr(s.recv(100)), flush=True)
except OSError as e:
    print("dead", e.errno, flush=True)
`;
}
