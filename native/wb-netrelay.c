/*
 * wb-netrelay: the server's end of the filtering proxy (docs/tools.md#network-in-safe-mode), outside every
 * sandbox, so that the bytes of an allowed tunnel never pass through the server's JavaScript.
 *
 *   wb-netrelay <listen-socket-path> <server-socket-path>
 *
 * Listens on a unix socket (mode 0600) that the server then renames to where the sandboxes' bridges
 * (wb-netbridge.c) connect, and says so with an `L` frame on standard output. For each connection it reads the
 * first bytes:
 * - `CONNECT `: the request head (up to the empty line, at most HEAD_MAX bytes) goes to the server in an `H`
 *   frame, and the connection waits for the server's answer on standard input: `C` (connect to this address and
 *   port, which the server checked, answer 200 and move bytes both ways; on failure write the answer the frame
 *   carries), `R` (write this answer and close) or `K` (close). Bytes that came after the head go upstream once
 *   connected.
 * - anything else (an absolute-URI http request): the connection is handed whole to the server's own proxy on
 *   <server-socket-path>, the bytes read so far first.
 * Every connection the server was told of ends with an `X` frame. It holds no policy and parses nothing but
 * where a head ends: the server decides, and can cut any tunnel (`K`, when the command that opened it ends).
 * An `H` frame starts with the connection's origin (u32): the number of the sandbox's listener it came from
 * (numbered from 1 as they are handed over), 0 for one made on the unix socket itself; the server ties a
 * command's credential to one origin. When a bridge ends (its command ended), every connection accepted on its
 * listener is closed with it, whatever state it is in, so none outlives the command in another's hands.
 * Frames both ways: u32 length (of what follows), u8 type, u32 id, payload; little-endian. It exits when its
 * standard input ends (the server is gone).
 *
 * Bounded: at most MAX_CONNS connections (further ones wait in the listen backlog), at most PER_LISTENER of them
 * from one sandbox's listener and DIRECT_CONNS made on the unix socket itself (one sandbox cannot fill the
 * table for the others), each with two buffers of
 * BUF_BYTES once its tunnel opens (HEAD_MAX bytes of head before), a head within HEAD_MS, an answer within
 * WAIT_MS, a connect within CONNECT_MS, and a tunnel idle for IDLE_MS is closed. No dependencies beyond libc;
 * Linux only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "wb-splice.h"
#include "wb-sunpath.h"

#define MAX_CONNS 1024
#define MAX_LISTENERS 256
#define PER_LISTENER 128
#define DIRECT_CONNS 256
#define HEAD_MAX (16 * 1024)
#define FRAME_MAX (64 * 1024)
#define HEAD_MS 10000
#define WAIT_MS 30000
#define CONNECT_MS 10000
#define IDLE_MS 120000
#define SEND_MS 2000
#define DRAIN_MS 2000

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

enum state { HEAD, WAIT, CONNECTING, RELAY, DRAIN };

struct conn {
  enum state state;
  uint32_t id;
  int cli;  /* the bridge's connection */
  int peer; /* upstream, or the server's own proxy; -1 before */
  char *head;
  size_t hlen; /* bytes read before the relay starts */
  size_t hend; /* where the CONNECT head ends (0: not found yet) */
  int announced; /* the server was sent its head: an X frame when it closes */
  uint32_t origin; /* the listener it was accepted on (its serial), 0: the unix socket itself */
  char *fail;    /* what to answer when the connect fails */
  size_t flen;
  struct half up, down; /* cli -> peer, peer -> cli */
  long long deadline;   /* ms on CLOCK_MONOTONIC */
};

static struct conn *conns[MAX_CONNS];
static int nconns;

/* A sandbox's own listening socket, handed over by its bridge; it stays while the bridge's connection does. */
struct listener {
  int fd;
  int bridge;
  uint32_t serial; /* never 0, never reused while this relay runs */
  int conns;       /* its connections open now */
};
static struct listener listeners[MAX_LISTENERS];
static int nlisteners;
static uint32_t next_serial = 1;
static int ndirect; /* connections made on the unix socket itself */

static uint32_t next_id = 1;
/* The server's socket for what is not a CONNECT (its path may be long: wb-sunpath.h). */
static struct sockaddr_un server_sa;

static const char ESTABLISHED[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
static const char TOO_LARGE[] =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 49\r\nConnection: close\r\n\r\nworkbench-mcp proxy: the request head is too large\n";

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void le32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Frames to the server wait here until the loop is about to poll again, so that a burst (the heads of many
 * connections opened at once, the closes at their end) reaches the server as one write, not one per frame. */
static unsigned char obuf[FRAME_MAX + 9];
static size_t olen;

/* What waits for the server, written (blocking: the server reads its end at once); the server gone: exit. */
static void flush_out(void) {
  size_t off = 0;
  while (off < olen) {
    ssize_t w = write(1, obuf + off, olen - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0);
    off += (size_t)w;
  }
  olen = 0;
}

/* One frame to the server, its payload `pre` (npre bytes) then `payload` (at most HEAD_MAX + 4 bytes in all,
 * well under FRAME_MAX). */
static void frame_out2(char type, uint32_t id, const void *pre, size_t npre, const void *payload, size_t n) {
  if (olen + 9 + npre + n > sizeof obuf) flush_out();
  le32(obuf + olen, (uint32_t)(5 + npre + n));
  obuf[olen + 4] = (unsigned char)type;
  le32(obuf + olen + 5, id);
  if (npre) memcpy(obuf + olen + 9, pre, npre);
  if (n) memcpy(obuf + olen + 9 + npre, payload, n);
  olen += 9 + npre + n;
}

static void frame_out(char type, uint32_t id, const void *payload, size_t n) {
  frame_out2(type, id, NULL, 0, payload, n);
}

/* All of `n` bytes to a non-blocking socket, waiting at most SEND_MS for room; 0, or -1. */
static int send_all(int fd, const char *p, size_t n) {
  long long until = now_ms() + SEND_MS;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w > 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && !again()) return -1;
    long long left = until - now_ms();
    struct pollfd pf = {fd, POLLOUT, 0};
    if (left <= 0 || poll(&pf, 1, (int)left) <= 0) return -1;
  }
  return 0;
}

/*
 * An answer that ends the connection (a refusal, a failed connect, a head too large): written, then the client's
 * remaining bytes are read and dropped until it closes (at most DRAIN_MS), so that closing with bytes unread
 * does not reset the connection before the client has read the answer. Returns 0 (the loop goes on).
 */
static int answer(struct conn *c, const char *p, size_t n) {
  if (c->peer >= 0) {
    close(c->peer);
    c->peer = -1;
  }
  if (send_all(c->cli, p, n) < 0) return -1;
  shutdown(c->cli, SHUT_WR);
  c->state = DRAIN;
  c->deadline = now_ms() + DRAIN_MS;
  return 0;
}

/* DRAIN: what the client still sends is dropped; -1 once it has closed. */
static int drain(struct conn *c) {
  static char sink[16384];
  ssize_t n = read(c->cli, sink, sizeof sink);
  return n > 0 || (n < 0 && again()) ? 0 : -1;
}

static void close_conn(int i) {
  struct conn *c = conns[i];
  if (c->cli >= 0) close(c->cli);
  if (c->peer >= 0) close(c->peer);
  if (c->state == RELAY) {
    half_free(&c->up);
    half_free(&c->down);
  }
  if (c->announced) frame_out('X', c->id, NULL, 0);
  if (c->origin == 0) ndirect--;
  for (int j = 0; j < nlisteners; j++)
    if (listeners[j].serial == c->origin) listeners[j].conns--;
  free(c->head);
  free(c->fail);
  free(c);
  conns[i] = conns[--nconns];
  conns[nconns] = NULL;
}

static int find(uint32_t id) {
  for (int i = 0; i < nconns; i++)
    if (conns[i]->id == id) return i;
  return -1;
}

/*
 * The relay starts: each direction through a buffer of BUF_BYTES (wb-splice.h says why not pipes). `n` bytes at
 * `p` (read before the relay began: a head passed on, bytes sent right behind a CONNECT; at most HEAD_MAX, less
 * than BUF_BYTES) go first towards the peer, queued in the upward half like any others, so a peer slow to take
 * them never stalls the loop. 0, or -1.
 */
static int start_relay(struct conn *c, const char *p, size_t n) {
  if (half_init_buffer(&c->up) < 0) return -1;
  if (half_init_buffer(&c->down) < 0) {
    half_free(&c->up);
    return -1;
  }
  memcpy(c->up.buf, p, n);
  c->up.off = 0;
  c->up.len = n;
  free(c->head);
  c->head = NULL;
  c->state = RELAY;
  c->deadline = now_ms() + IDLE_MS;
  return 0;
}

/* Not a CONNECT: the whole connection goes to the server's own proxy, the bytes read so far first. */
static int pass_to_server(struct conn *c) {
  /* Non-blocking: a unix socket connects at once or refuses (its backlog full), never stalling the loop. */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  c->peer = fd;
  if (connect(fd, (struct sockaddr *)&server_sa, sizeof server_sa) < 0) return -1;
  return start_relay(c, c->head, c->hlen);
}

/* A TCP listening socket, as a bridge creates it in its sandbox's network namespace. */
static int is_listener(int fd) {
  int v = 0, type = 0, domain = 0;
  socklen_t l = sizeof v, lt = sizeof type, ld = sizeof domain;
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == 0 && v == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &lt) == 0 && type == SOCK_STREAM &&
         getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &ld) == 0 && (domain == AF_INET || domain == AF_INET6);
}

/*
 * The first bytes of a connection came with a descriptor. Taken only as a bridge's hand-over: those four bytes
 * and a TCP listening socket, while there is room; answered Y (from now on the relay accepts its connections,
 * so their bytes cross one process instead of two) or N (the bridge relays them itself). Anything else: the
 * descriptor is closed, and so is the connection. Returns -1 (the connection leaves conns[] either way).
 */
static int on_hand_over(struct conn *c, int fd, ssize_t n) {
  int ok = n == 4 && memcmp(c->head, HAND_OVER, 4) == 0;
  if (ok && is_listener(fd) && nlisteners < MAX_LISTENERS) {
    set_nonblock(fd);
    if (send(c->cli, "Y", 1, MSG_NOSIGNAL) == 1) {
      listeners[nlisteners].fd = fd;
      listeners[nlisteners].serial = next_serial++;
      if (next_serial == 0) next_serial = 1;
      listeners[nlisteners].conns = 0;
      listeners[nlisteners++].bridge = c->cli;
      c->cli = -1; /* kept by the listener */
      return -1;
    }
  }
  close(fd);
  if (ok) send(c->cli, "N", 1, MSG_NOSIGNAL);
  return -1;
}

/* Bytes of a head arrived. -1: close the connection. */
static int on_head(struct conn *c) {
  /* Descriptors are looked for in the first bytes only (later ones are dropped, and so closed, by the kernel:
   * no control buffer). Every one received is closed but a single one offered alone with the hand-over bytes. */
  union {
    char buf[CMSG_SPACE(4 * sizeof(int))];
    struct cmsghdr align;
  } cm;
  struct iovec iov = {c->head + c->hlen, HEAD_MAX - c->hlen};
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = c->hlen == 0 ? cm.buf : NULL;
  m.msg_controllen = c->hlen == 0 ? sizeof cm.buf : 0;
  ssize_t n = recvmsg(c->cli, &m, MSG_CMSG_CLOEXEC);
  if (n < 0) return again() ? 0 : -1;
  int got = -1, count = 0;
  for (struct cmsghdr *h = m.msg_controllen ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS || h->cmsg_len < CMSG_LEN(0)) continue;
    size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t j = 0; j < k; j++) {
      int fd;
      memcpy(&fd, CMSG_DATA(h) + j * sizeof(int), sizeof fd);
      if (count++ == 0) got = fd;
      else close(fd);
    }
  }
  if (count > 1) close(got);
  if (count == 1) return on_hand_over(c, got, n);
  if (count > 1) return -1;
  if (n == 0 || (n > 0 && c->hlen == 0 && c->head[0] == 0)) return -1;
  size_t from = c->hlen > 3 ? c->hlen - 3 : 0;
  c->hlen += (size_t)n;
  size_t k = c->hlen < 8 ? c->hlen : 8;
  if (memcmp(c->head, "CONNECT ", k) != 0) return pass_to_server(c);
  if (c->hlen < 8) return 0;
  char *end = memmem(c->head + from, c->hlen - from, "\r\n\r\n", 4);
  if (!end) {
    return c->hlen < HEAD_MAX ? 0 : answer(c, TOO_LARGE, sizeof TOO_LARGE - 1);
  }
  c->hend = (size_t)(end + 4 - c->head);
  c->announced = 1;
  c->state = WAIT;
  c->deadline = now_ms() + WAIT_MS;
  unsigned char origin[4];
  le32(origin, c->origin);
  frame_out2('H', c->id, origin, 4, c->head, c->hend);
  return 0;
}

/* C frame: port (u16), the address as text and a NUL, then the answer for a failed connect. */
static int on_connect_frame(struct conn *c, const unsigned char *p, size_t n) {
  const unsigned char *nul = n > 2 ? memchr(p + 2, 0, n - 2) : NULL;
  if (c->state != WAIT || !nul || nul - p > 2 + INET6_ADDRSTRLEN) return -1;
  unsigned port = (unsigned)p[0] | (unsigned)p[1] << 8;
  const char *text = (const char *)p + 2;
  size_t used = (size_t)(nul - p) + 1;
  c->flen = n - used;
  c->fail = malloc(c->flen ? c->flen : 1);
  if (!c->fail) return -1;
  memcpy(c->fail, p + used, c->flen);
  struct sockaddr_storage ss;
  socklen_t len;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((unsigned short)port);
    len = sizeof *a4;
  } else if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((unsigned short)port);
    len = sizeof *a6;
  } else {
    return -1;
  }
  c->peer = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->peer < 0 || (connect(c->peer, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS))
    return answer(c, c->fail, c->flen);
  c->state = CONNECTING;
  c->deadline = now_ms() + CONNECT_MS;
  return 0;
}

/* The upstream connect finished: 200 to the client, early bytes upstream, then the relay. -1: close. */
static int on_connected(struct conn *c) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c->peer, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) return answer(c, c->fail, c->flen);
  int one = 1;
  setsockopt(c->peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (send_all(c->cli, ESTABLISHED, sizeof ESTABLISHED - 1) < 0) return -1;
  return start_relay(c, c->head + c->hend, c->hlen - c->hend);
}

/* What the server answered for one connection. */
static void on_frame(char type, uint32_t id, const unsigned char *p, size_t n) {
  int i = find(id);
  if (i < 0) return; /* closed meanwhile: its X frame is on its way */
  struct conn *c = conns[i];
  int close_it = 1;
  if (type == 'C') close_it = on_connect_frame(c, p, n) < 0;
  else if (type == 'R' && c->state == WAIT) close_it = answer(c, (const char *)p, n) < 0;
  if (close_it) close_conn(i);
}

static unsigned char cbuf[FRAME_MAX + 4];
static size_t clen;

/* Frames from the server; its end closed: exit. */
static void on_control(void) {
  ssize_t n = read(0, cbuf + clen, sizeof cbuf - clen);
  if (n == 0 || (n < 0 && !again())) _exit(0);
  if (n < 0) return;
  clen += (size_t)n;
  size_t off = 0;
  while (clen - off >= 4) {
    uint32_t len = get32(cbuf + off);
    if (len < 5 || len > FRAME_MAX) _exit(2); /* not a frame the server sends */
    if (clen - off - 4 < len) break;
    const unsigned char *f = cbuf + off + 4;
    on_frame((char)f[0], get32(f + 1), f + 5, len - 5);
    off += 4 + len;
  }
  memmove(cbuf, cbuf + off, clen - off);
  clen -= off;
}

/* The bridge ended (its command did): its listener goes, and every connection accepted on it. */
static void drop_listener(int j) {
  uint32_t serial = listeners[j].serial;
  close(listeners[j].fd);
  close(listeners[j].bridge);
  listeners[j] = listeners[--nlisteners];
  for (int i = nconns - 1; i >= 0; i--)
    if (conns[i]->origin == serial) close_conn(i);
}

/* `origin`: the serial of the listener `lfd` is, 0 for the unix socket. */
static void accept_one(int lfd, uint32_t origin) {
  int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  /* A command's TCP connection (a handed-over listener): small writes (the 200, TLS handshake flights) go out
   * at once, not held back until the last one is acknowledged. A unix socket refuses it, harmlessly. */
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct conn *c = calloc(1, sizeof *c);
  char *head = malloc(HEAD_MAX);
  if (!c || !head) {
    free(c);
    free(head);
    close(fd);
    return;
  }
  c->cli = fd;
  c->peer = -1;
  c->head = head;
  c->id = next_id++;
  if (next_id == 0) next_id = 1;
  c->origin = origin;
  if (origin == 0) ndirect++;
  for (int j = 0; origin != 0 && j < nlisteners; j++)
    if (listeners[j].serial == origin) listeners[j].conns++;
  c->state = HEAD;
  c->deadline = now_ms() + HEAD_MS;
  conns[nconns++] = c;
}

static void serve(int lfd) {
  static struct pollfd pfd[2 + 2 * MAX_CONNS + 2 * MAX_LISTENERS];
  for (;;) {
    int n = 0;
    pfd[n].fd = 0;
    pfd[n++].events = POLLIN;
    pfd[n].fd = nconns < MAX_CONNS && ndirect < DIRECT_CONNS ? lfd : -1;
    pfd[n++].events = POLLIN;
    for (int i = 0; i < nconns; i++) {
      struct conn *c = conns[i];
      pfd[n].fd = c->state == HEAD || c->state == RELAY || c->state == DRAIN ? c->cli : -1;
      pfd[n++].events = c->state == RELAY ? want(&c->up, &c->down) : POLLIN;
      pfd[n].fd = c->state == CONNECTING || c->state == RELAY ? c->peer : -1;
      pfd[n++].events = c->state == RELAY ? want(&c->down, &c->up) : POLLOUT;
    }
    /* The handed-over listeners, each with its bridge's connection (its end: the sandbox's end). */
    int lbase = n, lcount = nlisteners;
    for (int j = 0; j < nlisteners; j++) {
      pfd[n].fd = nconns < MAX_CONNS && listeners[j].conns < PER_LISTENER ? listeners[j].fd : -1;
      pfd[n++].events = POLLIN;
      pfd[n].fd = listeners[j].bridge;
      pfd[n++].events = POLLIN;
    }
    flush_out();
    int r = poll(pfd, (nfds_t)n, nconns ? 1000 : -1);
    if (r < 0 && errno != EINTR) _exit(1);
    long long now = now_ms();
    /* Connections first, from the last (their pollfd slots follow the order of conns[] before any change). */
    for (int i = nconns - 1; i >= 0; i--) {
      struct conn *c = conns[i];
      short a = r > 0 ? pfd[2 + 2 * i].revents : 0, b = r > 0 ? pfd[3 + 2 * i].revents : 0;
      /* Every state but a tunnel in use has a deadline from when it began (a head trickled in a byte at a time
       * still ends); a tunnel's is pushed back by each byte it moves. */
      if ((!a && !b) || c->state != RELAY) {
        if (now >= c->deadline) {
          close_conn(i);
          continue;
        }
        if (!a && !b) continue;
      }
      int bad = 0;
      if (c->state == HEAD) bad = on_head(c) < 0;
      else if (c->state == DRAIN) bad = drain(c) < 0;
      else if (c->state == CONNECTING) bad = on_connected(c) < 0;
      else if (c->state == RELAY) {
        c->deadline = now + IDLE_MS;
        bad = ((a | b) & POLLNVAL) || pump(c->cli, c->peer, &c->up) < 0 || pump(c->peer, c->cli, &c->down) < 0 ||
              (c->up.shut && c->down.shut) || ((a & POLLERR) && !(a & POLLIN)) || ((b & POLLERR) && !(b & POLLIN));
      }
      if (bad) close_conn(i);
    }
    for (int j = lcount - 1; r > 0 && j >= 0; j--) {
      if (pfd[lbase + 2 * j + 1].revents) {
        drop_listener(j); /* the bridge ended, or sent what it never sends */
        continue;
      }
      for (int k = 0; k < 16 && (pfd[lbase + 2 * j].revents & POLLIN) && nconns < MAX_CONNS &&
                      listeners[j].conns < PER_LISTENER;
           k++) {
        int before = nconns;
        accept_one(listeners[j].fd, listeners[j].serial);
        if (nconns == before) break;
      }
    }
    if (r > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) on_control();
    if (r > 0 && pfd[1].fd >= 0 && (pfd[1].revents & POLLIN)) {
      for (int k = 0; k < 16 && nconns < MAX_CONNS && ndirect < DIRECT_CONNS; k++) {
        int before = nconns;
        accept_one(lfd, 0);
        if (nconns == before) break;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wb-netrelay <listen-socket-path> <server-socket-path>\n");
    return 127;
  }
  signal(SIGPIPE, SIG_IGN);
  /* Ctrl-C reaches the whole foreground process group: the server stops the relay itself (or its end closes
   * standard input, or PDEATHSIG), so the relay must not end first and look like a failure. */
  signal(SIGINT, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl(PR_SET_NAME, "wb-netrelay", 0, 0, 0);
  /* Standard input, output and error only. */
  if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
    for (int fd = 3; fd < 1024; fd++) close(fd);
  /* Two descriptors per connection and two per listener, more than the usual soft limit: lift it. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  /* Paths too long for sockaddr_un are reached through their directories (wb-sunpath.h), opened after the
   * close_range above. */
  struct sockaddr_un sa;
  int listen_dir = -1, server_dir = -1;
  if (sun_address(&sa, argv[1], &listen_dir) < 0 || sun_address(&server_sa, argv[2], &server_dir) < 0) {
    fprintf(stderr, "wb-netrelay: cannot address a socket path (%s)\n", strerror(errno));
    return 2;
  }
  umask(077);
  unlink(argv[1]);
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || chmod(argv[1], 0600) < 0 ||
      listen(lfd, 128) < 0) {
    fprintf(stderr, "wb-netrelay: cannot listen on %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  set_nonblock(0);
  frame_out('L', 0, NULL, 0);
  serve(lfd);
  return 0;
}
