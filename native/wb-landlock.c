/*
 * wb-landlock: the command sandbox where bubblewrap cannot run
 * (docs/security-model.md#the-landlock-sandbox).
 *
 *   wb-landlock [--rw PATH]... [--ro PATH]... [--read PATH]... [--hide PATH]... [--no-inet] [--seccomp FD]
 *               -- <command> [arg]...
 *   wb-landlock --abi
 *
 * Confines itself, then execs the command (which therefore keeps this process's pid, process group and
 * session: the server signals it like an unsandboxed command). In order:
 *  - capabilities: the bounding and ambient sets emptied and the securebits locked so that even uid 0 gains
 *    no capability from execve (where this process may change them: a root server; an unprivileged one has
 *    none);
 *  - no_new_privs (setuid/setgid bits and file capabilities give nothing);
 *  - a Landlock ruleset handling every filesystem right of the running kernel's ABI: every right under each
 *    --rw hierarchy; read, list and execute under each --read path (everywhere, "/", when none is given)
 *    except the --hide paths, which get nothing (their parent directories stay listable), and under the --ro
 *    paths (inside hidden ones); with ABI >= 4 and
 *    --no-inet, TCP bind and connect with no port allowed; with ABI >= 6, abstract unix sockets and signals
 *    scoped to this sandbox;
 *  - the seccomp filter read from --seccomp FD (a classic BPF program, as bubblewrap's --seccomp reads it);
 *  - every descriptor above 2 close-on-exec (wb-fds.h): the command gets stdin, stdout and stderr only.
 * It never runs the command unconfined: whatever step fails ends it with status 126 and a message.
 * `--abi` prints the kernel's Landlock ABI version (0: none) and exits.
 * No dependencies beyond libc; Linux only. Kernel headers older than the kernel are completed below.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "wb-fds.h"
#if defined(__has_include)
#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#endif
#endif

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#define RULE_PATH_BENEATH 1

/* Filesystem rights by the ABI that introduced them. */
#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_ABI1 ((1ULL << 13) - 1)
#define FS_REFER (1ULL << 13)    /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
/* Rights that apply to a file (the rest only to directories). */
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)

/* The ruleset's attributes as ABI 6 knows them; older kernels are given the prefix they know. */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct path_beneath {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#define MAX_PATHS 256
#define MAX_FILTER_INSNS 4096

static const char *rw[MAX_PATHS];
static int nrw;
static const char *ro[MAX_PATHS];
static int nro;
static const char *readable[MAX_PATHS];
static int nread;
static const char *hide[MAX_PATHS];
static int nhide;
static int ruleset = -1;
static uint64_t fs_all;

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "wb-landlock: %s%s%s%s%s; the command was not run\n", what, detail ? " " : "",
          detail ? detail : "", errno ? ": " : "", errno ? strerror(errno) : "");
  exit(126);
}

static void die_usage(void) {
  fprintf(stderr,
          "usage: wb-landlock [--rw PATH]... [--ro PATH]... [--read PATH]... [--hide PATH]... [--no-inet] [--seccomp FD] -- command [args...]\n"
          "       wb-landlock --abi\n");
  exit(126);
}

static int landlock_abi(void) {
  long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : (int)v;
}

static uint64_t fs_rights(int abi) {
  uint64_t r = FS_ABI1;
  if (abi >= 2) r |= FS_REFER;
  if (abi >= 3) r |= FS_TRUNCATE;
  if (abi >= 5) r |= FS_IOCTL_DEV;
  return r;
}

/* Adds a rule for the object `fd` names; directory rights are left out for anything but a directory. */
static void add_rule(int fd, uint64_t access, const char *name) {
  struct stat st;
  if (fstat(fd, &st) != 0) fail("cannot stat", name);
  struct path_beneath pb = {.allowed_access = access & fs_all, .parent_fd = fd};
  if (!S_ISDIR(st.st_mode)) pb.allowed_access &= FS_FILE_RIGHTS;
  if (pb.allowed_access && syscall(SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &pb, 0) != 0)
    fail("cannot add a Landlock rule for", name);
}

/* Whether `p` is `dir` or lies below it. */
static int within(const char *p, const char *dir) {
  size_t n = strlen(dir);
  if (n == 1 && dir[0] == '/') return 1;
  return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int is_hidden(const char *p) {
  for (int i = 0; i < nhide; i++)
    if (strcmp(hide[i], p) == 0) return 1;
  return 0;
}

/* Whether `p` is a hidden path or lies inside one. */
static int inside_hidden(const char *p) {
  for (int i = 0; i < nhide; i++)
    if (within(p, hide[i])) return 1;
  return 0;
}

static int hides_below(const char *dir) {
  for (int i = 0; i < nhide; i++)
    if (strcmp(hide[i], dir) != 0 && within(hide[i], dir)) return 1;
  return 0;
}

#define READ_RIGHTS (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)

/*
 * Read rights for `path` (an open directory `fd`): on the whole hierarchy when nothing below it is hidden;
 * else listing it, and the same decision for each entry but the hidden ones. Symbolic links get no rule:
 * Landlock judges the object a path resolves to.
 */
static void grant_read(int fd, const char *path, int depth) {
  if (!hides_below(path)) {
    add_rule(fd, READ_RIGHTS, path);
    return;
  }
  if (depth > 32) fail("hidden paths nest too deep at", path);
  add_rule(fd, FS_READ_DIR, path);
  /* A directory this user cannot list: nothing below it is granted (it stays out of reach). */
  int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
  if (!d) {
    if (dfd >= 0) close(dfd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char child[PATH_MAX];
    int n = snprintf(child, sizeof child, "%s/%s", strcmp(path, "/") == 0 ? "" : path, e->d_name);
    if (n < 0 || (size_t)n >= sizeof child || is_hidden(child)) continue;
    int cfd = openat(fd, e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) continue; /* gone since it was listed */
    struct stat st;
    if (fstat(cfd, &st) == 0 && !S_ISLNK(st.st_mode)) {
      if (S_ISDIR(st.st_mode))
        grant_read(cfd, child, depth + 1);
      else
        add_rule(cfd, READ_RIGHTS, child);
    }
    close(cfd);
  }
  closedir(d);
}

static void build_ruleset(int abi, int no_inet) {
  fs_all = fs_rights(abi);
  struct ruleset_attr attr = {.handled_access_fs = fs_all};
  size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4) {
    size = offsetof(struct ruleset_attr, scoped);
    if (no_inet) attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
  }
  if (abi >= 6) {
    size = sizeof attr;
    attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
  }
  errno = 0;
  ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) fail("cannot create a Landlock ruleset", NULL);
  if (nread == 0) readable[nread++] = "/";
  for (int i = 0; i < nread; i++) {
    if (inside_hidden(readable[i])) continue;
    int fd = open(readable[i], O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      fail("cannot open", readable[i]);
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
      grant_read(fd, readable[i], 0);
    else
      add_rule(fd, READ_RIGHTS, readable[i]);
    close(fd);
  }
  for (int i = 0; i < nrw + nro; i++) {
    const char *p = i < nrw ? rw[i] : ro[i - nrw];
    int fd = open(p, O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      fail("cannot open", p);
    }
    add_rule(fd, i < nrw ? fs_all : READ_RIGHTS, p);
    close(fd);
  }
}

/* Empties the capability sets for good where this process may (CAP_SETPCAP); harmless where it has none. */
static void drop_capabilities(void) {
  /* SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS_LOCKED, SECBIT_NO_CAP_AMBIENT_RAISE, locked. */
  prctl(PR_SET_SECUREBITS, 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x40 | 0x80, 0, 0, 0);
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct {
    uint32_t version;
    int pid;
  } hdr = {0x20080522, 0};
  uint32_t data[6] = {0};
  errno = 0;
  if (syscall(SYS_capset, &hdr, data) != 0) fail("cannot drop capabilities", NULL);
}

/* Reads a classic BPF program from `fd` (bubblewrap's --seccomp format) and installs it. */
static void load_seccomp(int fd) {
  static struct sock_filter insns[MAX_FILTER_INSNS];
  size_t have = 0, cap = sizeof insns;
  for (;;) {
    ssize_t n = read(fd, (char *)insns + have, cap - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read the seccomp filter", NULL);
    if (n == 0) break;
    have += (size_t)n;
    if (have == cap) fail("the seccomp filter is too large", NULL);
  }
  close(fd);
  errno = 0;
  if (have == 0 || have % sizeof insns[0]) fail("the seccomp filter is malformed", NULL);
  struct sock_fprog prog = {.len = (unsigned short)(have / sizeof insns[0]), .filter = insns};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) fail("cannot load the seccomp filter", NULL);
}

int main(int argc, char **argv) {
  int no_inet = 0, filter_fd = -1, i = 1;
  if (argc == 2 && strcmp(argv[1], "--abi") == 0) {
    printf("%d\n", landlock_abi());
    return 0;
  }
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--no-inet") == 0)
      no_inet = 1;
    else if (i + 1 >= argc)
      die_usage();
    else if (strcmp(a, "--rw") == 0 && nrw < MAX_PATHS)
      rw[nrw++] = argv[++i];
    else if (strcmp(a, "--ro") == 0 && nro < MAX_PATHS)
      ro[nro++] = argv[++i];
    else if (strcmp(a, "--read") == 0 && nread < MAX_PATHS)
      readable[nread++] = argv[++i];
    else if (strcmp(a, "--hide") == 0 && nhide < MAX_PATHS)
      hide[nhide++] = argv[++i];
    else if (strcmp(a, "--seccomp") == 0)
      filter_fd = atoi(argv[++i]);
    else
      die_usage();
  }
  if (i + 1 >= argc) die_usage();
  char **cmd = argv + i + 1;
  errno = 0;
  int abi = landlock_abi();
  if (abi < 1) fail("the kernel offers no Landlock", NULL);
  build_ruleset(abi, no_inet);
  drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("cannot set no_new_privs", NULL);
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) fail("cannot enforce the Landlock ruleset", NULL);
  close(ruleset);
  if (filter_fd >= 0) load_seccomp(filter_fd);
  errno = 0;
  if (cloexec_from(3) != 0) fail("cannot mark descriptors above 2 close-on-exec", NULL);
  execvp(cmd[0], cmd);
  fprintf(stderr, "wb-landlock: %s: %s\n", cmd[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
