/*
 * wb-netbridge: the sandbox's end of the filtering proxy (docs/tools.md#network-in-safe-mode).
 *
 *   wb-netbridge <port> <unix-socket-path> -- <command> [args...]
 *
 * Listens on 127.0.0.1:<port> inside the sandbox's own network namespace (bubblewrap brings `lo` up), then
 * execs the command. A listener process, started before the exec and detached from the command (double fork:
 * the sandbox's init adopts it, so the command has no child it did not make), first offers the listening
 * socket to the server's relay (wb-netrelay.c) over the proxy's unix socket; taken, the relay accepts the
 * command's connections itself and this process only waits. Otherwise (no relay, or the relay ends), it accepts
 * TCP connections and relays each one, bytes both ways, to the unix socket the server's proxy listens on. The
 * proxy decides what may pass; this program only copies bytes and holds no policy. It exits when the command
 * exits (pidfd, else a once-a-second check) and dies with the sandbox's PID namespace in any case.
 *
 * Bytes move through a pipe per direction with splice(2), so they are never copied into this process (a large
 * download costs the bridge a few system calls per megabyte); where splice is refused, through a buffer.
 * Bounded: at most MAX_CONNS connections at once (further ones wait in the listen backlog), each with at most
 * PIPE_BYTES in flight towards the command and 64 KiB towards the proxy. No dependencies beyond libc; Linux only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>
#include "wb-splice.h"
#include "wb-sunpath.h"
#include "wb-fds.h"

#define MAX_CONNS 256
/* Downloads (proxy → command) get a pipe this large; uploads keep the system's default (64 KiB). Pipe pages
 * count against the user's pipe-user-pages-soft, which other sandboxes of the same user share, hence not more. */
#define PIPE_BYTES (256 * 1024)

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

struct conn {
  int tcp, unx;
  struct half up;   /* tcp -> unix */
  struct half down; /* unix -> tcp */
};

static struct conn *conns[MAX_CONNS];
static int nconns;
static const char *sock_path;
/* The socket's directory, opened once when its path is too long for sockaddr_un (wb-sunpath.h). */
static int sock_dir = -1;

static void die_usage(void) {
  fprintf(stderr, "usage: wb-netbridge <port> <unix-socket-path> -- <command> [args...]\n");
  exit(127);
}

static void close_conn(int i) {
  struct conn *c = conns[i];
  close(c->tcp);
  close(c->unx);
  half_free(&c->up);
  half_free(&c->down);
  free(c);
  conns[i] = conns[--nconns];
  conns[nconns] = NULL;
}

/* A new connection to the proxy's socket; blocking connect bounded by a send timeout, then non-blocking. */
static int connect_proxy(void) {
  struct sockaddr_un sa;
  if (sun_address(&sa, sock_path, &sock_dir) < 0) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct timeval tv = {2, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    close(fd);
    return -1;
  }
  set_nonblock(fd);
  return fd;
}

static void accept_one(int lfd) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int u = connect_proxy();
  struct conn *c = u < 0 ? NULL : calloc(1, sizeof *c);
  int ok = c != NULL;
  if (c) {
    ok = half_init(&c->up, 0) == 0;
    ok = half_init(&c->down, PIPE_BYTES) == 0 && ok;
  }
  if (!ok) {
    /* No proxy to talk to: the client sees the connection closed at once rather than a hang. */
    if (c) {
      half_free(&c->up);
      half_free(&c->down);
      free(c);
    }
    if (u >= 0) close(u);
    close(fd);
    return;
  }
  c->tcp = fd;
  c->unx = u;
  conns[nconns++] = c;
}

/* The command's process ended (its pidfd is readable, or, without one, it no longer exists). */
static int command_ended(const struct pollfd *p, pid_t command) {
  return p->fd >= 0 ? p->revents != 0 : (kill(command, 0) < 0 && errno == ESRCH);
}

/*
 * Offers the listening socket to the server's relay (wb-netrelay.c) over the proxy's socket. Taken (`Y`), the
 * relay accepts the command's connections itself, so their bytes cross one process instead of two; this
 * program then only holds the returned connection open for as long as the command runs. -1: not taken (no
 * relay, the server relays bytes itself, or the relay is full): this program relays as before.
 */
static int hand_over(int lfd) {
  int u = connect_proxy();
  if (u < 0) return -1;
  int fl = fcntl(u, F_GETFL);
  if (fl >= 0) fcntl(u, F_SETFL, fl & ~O_NONBLOCK);
  struct timeval tv = {2, 0};
  setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } cm;
  memset(&cm, 0, sizeof cm);
  struct iovec iov = {(void *)HAND_OVER, sizeof HAND_OVER};
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cm.buf;
  m.msg_controllen = sizeof cm.buf;
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &lfd, sizeof lfd);
  char ack = 0;
  if (sendmsg(u, &m, MSG_NOSIGNAL) != (ssize_t)sizeof HAND_OVER || read(u, &ack, 1) != 1 || ack != 'Y') {
    close(u);
    return -1;
  }
  return u;
}

/* Waits while the relay serves the listener: returns when the relay is gone (this program then takes over). */
static void watch(int relay, pid_t command, int pidfd) {
  for (;;) {
    struct pollfd p[2] = {{pidfd, POLLIN, 0}, {relay, POLLIN, 0}};
    int r = poll(p, 2, pidfd < 0 ? 1000 : -1);
    if (r < 0 && errno != EINTR) _exit(1);
    if (command_ended(&p[0], command)) _exit(0);
    if (r > 0 && p[1].revents) {
      close(relay);
      return;
    }
  }
}

static void serve(int lfd, pid_t command, int pidfd) {
  static struct pollfd pfd[2 + 2 * MAX_CONNS];
  for (;;) {
    int n = 0;
    pfd[n].fd = pidfd;
    pfd[n++].events = POLLIN;
    pfd[n].fd = nconns < MAX_CONNS ? lfd : -1;
    pfd[n++].events = POLLIN;
    for (int i = 0; i < nconns; i++) {
      struct conn *c = conns[i];
      pfd[n].fd = c->tcp;
      pfd[n++].events = want(&c->up, &c->down);
      pfd[n].fd = c->unx;
      pfd[n++].events = want(&c->down, &c->up);
    }
    int r = poll(pfd, (nfds_t)n, pidfd < 0 ? 1000 : -1);
    if (r < 0 && errno != EINTR) _exit(1);
    if (command_ended(&pfd[0], command)) _exit(0);
    if (r <= 0) continue;
    /* Connections first (their pollfd slots follow the order of conns[] before any change). */
    for (int i = nconns - 1; i >= 0; i--) {
      struct conn *c = conns[i];
      short a = pfd[2 + 2 * i].revents, b = pfd[3 + 2 * i].revents;
      if (!a && !b) continue;
      if (((a | b) & POLLNVAL) || pump(c->tcp, c->unx, &c->up) < 0 || pump(c->unx, c->tcp, &c->down) < 0) {
        close_conn(i);
        continue;
      }
      /* Both directions ended and drained, or one side failed outright. */
      if ((c->up.shut && c->down.shut) || ((a & POLLERR) && !(a & POLLIN)) || ((b & POLLERR) && !(b & POLLIN)))
        close_conn(i);
    }
    if (pfd[1].fd >= 0 && (pfd[1].revents & POLLIN)) {
      for (int k = 0; k < 16 && nconns < MAX_CONNS; k++) {
        int before = nconns;
        accept_one(lfd);
        if (nconns == before && errno == EAGAIN) break;
      }
    }
  }
}

static void close_others(int keep) {
  /* keep is usually 3 itself: then there is nothing below it to close (close_range(3, 2) would be EINVAL and
   * send every start through the loop below, thousands of close calls with a raised descriptor limit). */
  if ((keep <= 3 || syscall(SYS_close_range, 3, keep - 1, 0) == 0) && syscall(SYS_close_range, keep + 1, ~0U, 0) == 0)
    return;
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; fd++)
    if (fd != keep) close(fd);
}

int main(int argc, char **argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0) die_usage();
  char *end;
  long port = strtol(argv[1], &end, 10);
  if (*end || port < 1 || port > 65535) die_usage();
  sock_path = argv[2];
  char **cmd = argv + 4;

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((unsigned short)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  if (lfd >= 0) setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(lfd, 128) < 0) {
    /* The command still runs; without the bridge it simply has no network. */
    fprintf(stderr, "wb-netbridge: cannot listen on 127.0.0.1:%ld (%s); HTTP(S) through the proxy is unavailable\n",
            port, strerror(errno));
    if (lfd >= 0) close(lfd);
    lfd = -1;
  }

  if (lfd >= 0) {
    pid_t command = getpid();
    pid_t child = fork();
    if (child == 0) {
      if (fork() != 0) _exit(0); /* the grandchild is adopted by the sandbox's init */
      setsid();                  /* out of the command's process group and terminal: ^C and job control miss it */
      signal(SIGPIPE, SIG_IGN);
      signal(SIGHUP, SIG_IGN);
      prctl(PR_SET_NAME, "wb-netbridge", 0, 0, 0);
      /* Six descriptors per connection (two sockets, two pipes): lift the soft limit as far as allowed. */
      struct rlimit rl;
      if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
      }
      int devnull = open("/dev/null", O_RDWR);
      if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2) close(devnull);
      }
      close_others(lfd);
      /* The listener outlives nothing: it stops when the command's process ends. */
      int pidfd = (int)syscall(SYS_pidfd_open, command, 0);
      if (pidfd < 0 && errno == ESRCH) _exit(0);
      int relay = hand_over(lfd);
      if (relay >= 0) watch(relay, command, pidfd);
      serve(lfd, command, pidfd);
      _exit(0);
    }
    if (child > 0) waitpid(child, NULL, 0);
    close(lfd);
  }
  /* Only 0, 1 and 2 reach the command (wb-fds.h). */
  if (cloexec_from(3) != 0) {
    fprintf(stderr, "wb-netbridge: cannot mark descriptors above 2 close-on-exec; the command was not run\n");
    return 126;
  }
  execvp(cmd[0], cmd);
  fprintf(stderr, "wb-netbridge: cannot run %s: %s\n", cmd[0], strerror(errno));
  return 127;
}
