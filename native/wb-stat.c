/*
 * wb-stat: the sizes and times of many workspace files at once, for listings (docs/tools.md#limits; the server's
 * side is src/process/stat-batch.ts).
 *
 *   wb-stat            (descriptor 3: the workspace's root directory; requests on 0, answers on 1)
 *
 * A listing needs an lstat per file. From Node each one goes through /proc/self/fd/N/name (the walk holds a
 * descriptor per directory, never a path that could be swapped for a symlink), which costs ~6 µs; here it is
 * one fstatat per file, relative to a directory descriptor this program opens itself, and a page of a listing
 * is one request and one answer.
 *
 * Confinement is the kernel's: a directory is opened with openat2(2) beneath descriptor 3 with RESOLVE_BENEATH
 * and RESOLVE_NO_SYMLINKS, so no path can leave the workspace or pass through a symlink, whatever the files do
 * meanwhile, and the last component is never followed (AT_SYMLINK_NOFOLLOW). This program reads no file's
 * content and holds no other descriptor. Where openat2 is missing (Linux before 5.6) or refused (a container's
 * seccomp profile) it exits with status 3 before answering, and the server stats the files itself.
 *
 * A request: "WBS1", two little-endian 32-bit numbers (the length of the rest, the number of paths), then that
 * many NUL-terminated paths relative to the root ("a/b/c.txt"). The answer: "WBS1", the number of records, then
 * one 24-byte record per path, in order: a kind byte (0 cannot be stat'ed, 1 file, 2 directory, 3 symlink,
 * 4 other), seven zero bytes, the size (little-endian signed 64-bit) and the modification time in milliseconds
 * (little-endian IEEE double, as Node's Stats.mtimeMs). A malformed request ends the program with status 125;
 * end of input before a request ends it with status 0. No dependencies beyond libc; Linux only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WB_PROGRAM "wb-stat"
#include "wb-request.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif

#define ROOT_FD 3
#define MAX_BODY (16u * 1024 * 1024)
#define MAX_PATHS (1u << 20)
#define RECORD 24

struct open_how_v0 {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};


static void write_all(const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0); /* the server went away */
    p += w;
    n -= (size_t)w;
  }
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* The directory part of a path, opened beneath the root; the cached descriptor when it is the same one. */
static char *cached_dir;
static int cached_fd = -1;

static int open_beneath(const char *dir) {
  struct open_how_v0 how = {
      .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
      .mode = 0,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd = (int)syscall(SYS_openat2, ROOT_FD, dir, &how, sizeof how);
  /* Missing (ENOSYS) or refused by a seccomp profile (EPERM, as container engines answer). */
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
    fprintf(stderr, "wb-stat: openat2 is not available here\n");
    _exit(3);
  }
  return fd;
}

static int dir_fd(const char *dir, size_t len) {
  if (len == 0) return ROOT_FD;
  if (cached_dir && strlen(cached_dir) == len && memcmp(cached_dir, dir, len) == 0) return cached_fd;
  if (cached_fd >= 0) close(cached_fd);
  free(cached_dir);
  cached_dir = strndup(dir, len);
  if (!cached_dir) fail("out of memory");
  cached_fd = open_beneath(cached_dir);
  return cached_fd;
}

/* Forget the cached directory between requests: the next request sees the tree as it is then. */
static void drop_cache(void) {
  if (cached_fd >= 0) close(cached_fd);
  cached_fd = -1;
  free(cached_dir);
  cached_dir = NULL;
}

static void stat_one(const char *path, unsigned char *rec) {
  memset(rec, 0, RECORD);
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  if (path[0] == '/' || *name == '\0') return;
  int dfd = dir_fd(path, slash ? (size_t)(slash - path) : 0);
  struct stat st;
  if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  rec[0] = S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : S_ISLNK(st.st_mode) ? 3 : 4;
  put64(rec + 8, (uint64_t)st.st_size);
  double ms = (double)st.st_mtim.tv_sec * 1000.0 + (double)st.st_mtim.tv_nsec / 1e6;
  uint64_t bits;
  memcpy(&bits, &ms, sizeof bits);
  put64(rec + 16, bits);
}

int main(void) {
  struct stat root;
  if (fstat(ROOT_FD, &root) != 0 || !S_ISDIR(root.st_mode)) fail("descriptor 3 is not a directory");
  /* Before the first answer: without openat2 nothing could be answered truthfully. */
  int probe = open_beneath(".");
  if (probe >= 0) close(probe);
  for (;;) {
    unsigned char head[12];
    if (read_all(head, sizeof head, 1)) return 0;
    if (memcmp(head, "WBS1", 4) != 0) fail("not a request");
    uint32_t len = le32(head + 4), count = le32(head + 8);
    if (len > MAX_BODY || count > MAX_PATHS || count > len) fail("the request is too large");
    unsigned char *body = malloc(len ? len : 1);
    unsigned char *out = malloc(8 + (size_t)count * RECORD);
    if (!body || !out) fail("out of memory");
    read_all(body, len, 0);
    memcpy(out, "WBS1", 4);
    put32(out + 4, count);
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
      const unsigned char *end = memchr(body + at, '\0', len - at);
      if (!end) fail("a path has no NUL");
      stat_one((const char *)body + at, out + 8 + (size_t)i * RECORD);
      at = (size_t)(end - body) + 1;
    }
    if (at != len) fail("the request has bytes after its last path");
    drop_cache();
    write_all(out, 8 + (size_t)count * RECORD);
    free(body);
    free(out);
  }
}
