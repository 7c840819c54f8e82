#!/usr/bin/env python3
# The attacker of test/confinement/confinement2-isolation-suite.ts: run as a command, it tries to reach every process it
# is not made of. Targets: every pid it can see in /proc and pids 1-200 blindly, minus its own tree (itself,
# its descendants, its ancestors except a node process — the helper that starts commands is a target — and its
# own sandbox's proxy bridge).
# For each target: kill(pid, 0), kill(pid, SIGSTOP) (SIGCONT right after a success, so a hit is reported
# instead of hanging the victim), ptrace(PTRACE_ATTACH) (detached after a success), pidfd_open and then
# pidfd_getfd of fds 0-9, process_vm_readv of 8 bytes. Each attempt prints "OK" or the errno's name; one JSON
# line per target, then {"done": N}. x86_64 syscall numbers (the other architectures are listed).
import ctypes
import errno
import json
import os
import platform
import signal
import time

NR = {
    "x86_64": {"pidfd_open": 434, "pidfd_getfd": 438, "process_vm_readv": 310},
    "aarch64": {"pidfd_open": 434, "pidfd_getfd": 438, "process_vm_readv": 270},
}[platform.machine()]
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def name(e):
    return errno.errorcode.get(e, str(e))


def stat(pid):
    try:
        s = open(f"/proc/{pid}/stat").read()
        r = s.rindex(")")
        return {"ppid": int(s[r + 2 :].split()[1]), "comm": s[s.index("(") + 1 : r]}
    except (OSError, ValueError):
        return None


def is_helper(pid, info):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        cmd = b""
    return info["comm"] == "node" or b"spawner" in cmd


def sig(pid, s):
    try:
        os.kill(pid, s)
        return "OK"
    except OSError as e:
        return name(e.errno)


def ptrace(pid):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        return name(ctypes.get_errno())
    # Attached: wait (bounded) for the attach stop, detach, and resume it, so the victim is not left stopped.
    for _ in range(200):
        try:
            if os.waitpid(pid, os.WNOHANG | WALL)[0] == pid:
                break
        except ChildProcessError:
            break
        time.sleep(0.01)
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    sig(pid, signal.SIGCONT)
    return "OK"


def pidfd(pid):
    fd = libc.syscall(NR["pidfd_open"], pid, 0)
    if fd < 0:
        return name(ctypes.get_errno()), "n/a"
    got = []
    for target in range(10):
        r = libc.syscall(NR["pidfd_getfd"], fd, target, 0)
        if r >= 0:
            got.append(str(target))
            os.close(r)
        else:
            got.append(name(ctypes.get_errno()))
    os.close(fd)
    ok = [g for g in got if g.isdigit()]
    return "OK", ("OK:" + ",".join(ok)) if ok else sorted(set(got))[0]


def vm_read(pid):
    buf = ctypes.create_string_buffer(8)
    local = IoVec(ctypes.cast(buf, ctypes.c_void_p), 8)
    addr = 0x400000
    try:
        addr = int(open(f"/proc/{pid}/maps").readline().split("-")[0], 16)
    except (OSError, ValueError):
        pass
    remote = IoVec(addr, 8)
    n = libc.syscall(NR["process_vm_readv"], pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return "OK" if n >= 0 else name(ctypes.get_errno())


def main():
    me = os.getpid()
    visible = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    table = {p: stat(p) for p in visible}
    own = {me}
    p = me
    for _ in range(64):
        info = table.get(p)
        if not info or info["ppid"] <= 0:
            break
        p = info["ppid"]
        parent = table.get(p)
        if parent and not is_helper(p, parent):
            own.add(p)
    mine = {me}  # descendants of this process (none expected, but they are not targets)
    for _ in range(64):
        more = {q for q, info in table.items() if info and info["ppid"] in mine} - mine
        if not more:
            break
        mine |= more
    own |= mine
    # In `safe`, the proxy's bridge of this command's own sandbox (a child of its init; docs/tools.md#network-in-safe-mode)
    # is part of the command: stopping it only cuts the command's own network.
    own |= {q for q, info in table.items() if info and info["comm"] == "wb-netbridge" and info["ppid"] in own}
    print(json.dumps({"me": me, "visible": {str(q): (table[q] or {}).get("comm") for q in visible}}), flush=True)
    targets = sorted((set(visible) | set(range(1, 201))) - own)
    for t in targets:
        row = {"pid": t, "comm": (table.get(t) or {}).get("comm")}
        row["kill0"] = sig(t, 0)
        row["stop"] = sig(t, signal.SIGSTOP)
        if row["stop"] == "OK":
            sig(t, signal.SIGCONT)
        row["ptrace"] = ptrace(t)
        row["pidfd"], row["getfd"] = pidfd(t)
        row["vmread"] = vm_read(t)
        print(json.dumps(row), flush=True)
    print(json.dumps({"done": len(targets)}), flush=True)


if __name__ == "__main__":
    main()
