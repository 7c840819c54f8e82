/*
 * wb-fds.h: a command inherits exactly its own descriptors (docs/security-model.md#descriptors). Called by
 * the native helpers just before they exec a command: every descriptor from `first` up is marked
 * close-on-exec, so whatever the helper itself was handed (a stray descriptor of whoever started the server,
 * a pipe of the sandbox's set-up) ends at the exec and only 0, 1 and 2 reach the command. close_range (Linux
 * 5.11) in one call; on older kernels each open descriptor listed in /proc/self/fd gets FD_CLOEXEC.
 */
#ifndef WB_FDS_H
#define WB_FDS_H
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Returns 0, or -1 when some descriptor could not be marked (the caller must not exec then). */
static inline int cloexec_from(int first) {
  if (syscall(SYS_close_range, (unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  int self = dirfd(d), bad = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (*end || end == e->d_name || fd < first || fd == self) continue;
    int flags = fcntl((int)fd, F_GETFD);
    if (flags >= 0 && fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC) != 0) bad = 1;
  }
  closedir(d);
  return bad ? -1 : 0;
}
#endif
