/*
 * wb-exec: the last program of a sandbox prepared ahead of its command (docs/security-model.md, "A sandbox
 * per command, prepared ahead").
 *
 *   wb-exec            (no arguments; the command arrives on standard input)
 *
 * The sandbox (bubblewrap, and the network bridge when there is one) is set up before anybody asked for a
 * command; this program waits at its end. It reads exactly one request from descriptor 0, then changes to the
 * request's directory and execs its argv with its environment, so the command replaces it: same process, same
 * sandbox, and whatever follows the request on descriptor 0 is the command's own input (the request is read to
 * its last byte and not one byte further).
 *
 * The request: "WBX1", then three little-endian 32-bit numbers — the length of the rest, the number of argv
 * strings, the number of environment strings — then that many NUL-terminated strings: the directory, argv,
 * environment. "WBX2" is the same request with two little-endian 64-bit numbers after the three, the device and
 * inode of the directory: after entering it this program checks that "." is that very directory (a directory
 * swapped for another, or for a symlink, between the server's check and this chdir is refused with status
 * 126), as the tool jails prepared ahead start ripgrep (src/process/jail/prepared-jail.ts). Anything else (a short read, a count that does not match, a string without its NUL) ends this
 * program with status 125 and a line on standard error; end of input before the request (the sandbox was not
 * needed) ends it with status 0. No dependencies beyond libc; Linux only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WB_PROGRAM "wb-exec"
#include "wb-request.h"
#include "wb-fds.h"

/* More than execve accepts (argv and environment share ARG_MAX): a bigger request is not one we sent. */
#define MAX_REQUEST (8u * 1024 * 1024)
#define MAX_STRINGS (256u * 1024)

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }


int main(int argc, char **argv) {
  (void)argv;
  if (argc != 1) fail("takes no arguments: the command arrives on standard input");
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
  execve(args[0], args, env);
  fprintf(stderr, "wb-exec: cannot run %s: %s\n", args[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}
