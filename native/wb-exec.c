/*
 * wb-exec: the last program of a sandbox prepared ahead of its command (docs/security-model.md, "A sandbox
 * per command, prepared ahead").
 *
 *   wb-exec                   (the command arrives on standard input)
 *   wb-exec --status-fd N     (the same; the command's end is reported on descriptor N, see below)
 *
 * The sandbox (bubblewrap, and the network bridge when there is one) is set up before anybody asked for a
 * command; this program waits at its end. It reads exactly one request from descriptor 0 (N, below), then
 * changes to the request's directory and execs its argv with its environment, so the command replaces it: same
 * process, same sandbox, and whatever follows the request on descriptor 0 is the command's own input (the
 * request is read to its last byte and not one byte further).
 *
 * The request: "WBX1", then three little-endian 32-bit numbers — the length of the rest, the number of argv
 * strings, the number of environment strings — then that many NUL-terminated strings: the directory, argv,
 * environment. "WBX2" is the same request with two little-endian 64-bit numbers after the three, the device and
 * inode of the directory: after entering it this program checks that "." is that very directory (a directory
 * swapped for another, or for a symlink, between the server's check and this chdir is refused with status
 * 126), as the tool jails prepared ahead start ripgrep (src/process/jail/prepared-jail.ts). Anything else (a short read, a count that does not match, a string without its NUL) ends this
 * program with status 125 and a line on standard error; end of input before the request (the sandbox was not
 * needed) ends it with status 0. No dependencies beyond libc; Linux only.
 *
 * With --status-fd N (the tool jails prepared ahead, src/process/jail/prepared-jail.ts) the request is read from
 * descriptor N, a socket, instead of 0 (which stays the command's input), and the command does not replace this
 * program: it runs as its child, and when it has ended this program shuts down the sockets of its standard
 * output and error for writing (so their reader sees their end at once, though the processes that set the
 * sandbox up still hold them), writes "WBS1" and two little-endian 32-bit numbers back on N — 0 and the exit
 * status, or 1 and the signal that ended the command — and exits with the command's status (128 + the signal).
 * Without this the reader waits for the whole sandbox to be torn down before it knows the command ended. The
 * command never gets N; whatever it started dies with the sandbox (this program is its PID 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define WB_PROGRAM "wb-exec"
#include "wb-request.h"
#include "wb-fds.h"

/* More than execve accepts (argv and environment share ARG_MAX): a bigger request is not one we sent. */
#define MAX_REQUEST (8u * 1024 * 1024)
#define MAX_STRINGS (256u * 1024)

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* --status-fd: runs the command as a child, reports its end on `status_fd`, exits as it did. */
static void run_and_report(char **args, char **env, int status_fd) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) fail("cannot start the command (fork)");
  if (pid == 0) {
    /* Ends with this program, should it be killed first. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
    execve(args[0], args, env);
    fprintf(stderr, "wb-exec: cannot run %s: %s\n", args[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) fail("cannot wait for the command");
  shutdown(1, SHUT_WR);
  shutdown(2, SHUT_WR);
  unsigned char msg[12];
  memcpy(msg, "WBS1", 4);
  int signaled = WIFSIGNALED(st);
  put32(msg + 4, signaled ? 1 : 0);
  put32(msg + 8, (uint32_t)(signaled ? WTERMSIG(st) : WEXITSTATUS(st)));
  for (size_t off = 0; off < sizeof msg;) {
    ssize_t w = write(status_fd, msg + off, sizeof msg - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break; /* the server is gone: nobody to tell */
    off += (size_t)w;
  }
  _exit(signaled ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}


int main(int argc, char **argv) {
  int status_fd = -1;
  if (argc == 3 && strcmp(argv[1], "--status-fd") == 0) {
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || end == argv[2] || n < 3 || n > 1024) fail("--status-fd takes a descriptor number above 2");
    status_fd = (int)n;
    request_fd = status_fd;
  } else if (argc != 1) {
    fail("takes no arguments but --status-fd N: the command arrives on standard input");
  }
  unsigned char head[16];
  if (read_all(head, sizeof head, 1)) return 0;
  int pinned = memcmp(head, "WBX2", 4) == 0;
  if (!pinned && memcmp(head, "WBX1", 4) != 0) fail("the request does not start with WBX1 or WBX2");
  uint64_t want_dev = 0, want_ino = 0;
  if (pinned) {
    unsigned char id[16];
    read_all(id, sizeof id, 0);
    want_dev = le64(id);
    want_ino = le64(id + 8);
  }
  uint32_t len = le32(head + 4), nargs = le32(head + 8), nenv = le32(head + 12);
  if (len == 0 || len > MAX_REQUEST) fail("the request's length is out of range");
  if (nargs == 0 || nargs > MAX_STRINGS || nenv > MAX_STRINGS) fail("the request's counts are out of range");
  char *body = malloc(len);
  char **args = calloc((size_t)nargs + 1, sizeof *args);
  char **env = calloc((size_t)nenv + 1, sizeof *env);
  if (!body || !args || !env) fail("out of memory");
  read_all((unsigned char *)body, len, 0);
  if (body[len - 1] != '\0') fail("the request's last string has no NUL");
  /* Split into 1 + nargs + nenv strings; the count must come out exact. */
  char *dir = body;
  size_t want = 1 + (size_t)nargs + nenv, have = 0;
  for (char *s = body; s < body + len; s += strlen(s) + 1) {
    if (have == 0) dir = s;
    else if (have <= nargs) args[have - 1] = s;
    else if (have - 1 - nargs < nenv) env[have - 1 - nargs] = s;
    if (++have > want) fail("the request has more strings than it says");
  }
  if (have != want) fail("the request has fewer strings than it says");
  if (chdir(dir) != 0) {
    fprintf(stderr, "wb-exec: cannot enter %s: %s\n", dir, strerror(errno));
    _exit(126);
  }
  struct stat st;
  if (pinned && (stat(".", &st) != 0 || (uint64_t)st.st_dev != want_dev || (uint64_t)st.st_ino != want_ino)) {
    fprintf(stderr, "wb-exec: %s is not the directory the server checked\n", dir);
    _exit(126);
  }
  /* Only 0, 1 and 2 reach the command (wb-fds.h). */
  if (cloexec_from(3) != 0) fail("cannot mark descriptors above 2 close-on-exec");
  if (status_fd >= 0) run_and_report(args, env, status_fd);
  execve(args[0], args, env);
  fprintf(stderr, "wb-exec: cannot run %s: %s\n", args[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}
