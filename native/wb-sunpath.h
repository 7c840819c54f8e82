/*
 * A unix socket's address whatever the length of its path, shared by wb-netbridge.c and wb-netrelay.c: a path
 * that fits sockaddr_un (107 bytes and the NUL) is used as it is; a longer one (a runtime root deep in the file
 * system) is reached through its directory, opened once, as /proc/self/fd/<fd>/<name>, which the kernel
 * resolves like the full path (docs/security-model.md#network-per-mode). The directory's descriptor stays open
 * for as long as the address is used.
 */
#ifndef WB_SUNPATH_H
#define WB_SUNPATH_H
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* `sa` for `path`; `*dirfd` (-1 at first) is the directory opened for a long one. 0, or -1 with errno set. */
static int sun_address(struct sockaddr_un *sa, const char *path, int *dirfd) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  size_t len = strlen(path);
  if (len < sizeof sa->sun_path) {
    memcpy(sa->sun_path, path, len + 1);
    return 0;
  }
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path || len >= 4096) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (*dirfd < 0) {
    char dir[4096];
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = 0;
    *dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0) return -1;
  }
  int n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, slash + 1);
  if (n < 0 || (size_t)n >= sizeof sa->sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}
#endif
