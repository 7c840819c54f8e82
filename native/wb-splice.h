/*
 * Bytes between two sockets, one direction per `struct half`, shared by wb-netbridge.c (the sandbox's end of the
 * filtering proxy) and wb-netrelay.c (the server's end): through a buffer of BUF_BYTES (read, then send), or
 * through a pipe with splice(2), so that bytes are never copied into the process, falling back to a buffer where
 * splice is refused for a pair. The relay copies: between two loopback TCP sockets, splice through a pipe cost
 * more than the copy it saves (docs/benchmarks.md, on the proxy). The bridge splices. The caller polls each
 * socket for want() and calls pump() for both directions when either is ready.
 */
#ifndef WB_SPLICE_H
#define WB_SPLICE_H
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_BYTES (64 * 1024)

/* What a bridge sends, with its listening socket attached, to hand it over to the relay (no HTTP request starts
 * with a NUL); the relay answers one byte, Y (taken) or N. */
static const char HAND_OVER[4] = {0, 'w', 'b', 'l'};

struct half {
  int pipe[2];  /* splice: bytes in flight live in this pipe ... */
  char *buf;    /* ... or, where splice is refused, in this buffer */
  size_t cap;   /* how much may be in flight */
  size_t off, len;
  int eof;  /* the reading side saw end of stream */
  int shut; /* the writing side was shut down after the data drained */
};

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void half_free(struct half *h) {
  if (h->pipe[0] >= 0) close(h->pipe[0]);
  if (h->pipe[1] >= 0) close(h->pipe[1]);
  free(h->buf);
}

/* A buffer of BUF_BYTES, no pipe. 0, or -1 when out of memory. */
static inline int half_init_buffer(struct half *h) {
  h->pipe[0] = h->pipe[1] = -1;
  h->buf = malloc(BUF_BYTES);
  h->cap = BUF_BYTES;
  return h->buf ? 0 : -1;
}

/* A pipe (of `bytes`, or the system's default size) for splice; else a buffer. 0, or -1 when out of memory. */
static inline int half_init(struct half *h, int bytes) {
  if (pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC) != 0) return half_init_buffer(h);
  int size = bytes ? fcntl(h->pipe[1], F_SETPIPE_SZ, bytes) : -1;
  if (size < 0) size = fcntl(h->pipe[1], F_GETPIPE_SZ);
  h->cap = size > 0 ? (size_t)size : 4096;
  return 0;
}

static int again(void) {
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* splice(2) refused for this pair (EINVAL): the half goes on with a buffer. 0, or -1 when out of memory. */
static int to_buffer(struct half *h) {
  if (h->len > 0) return -1; /* bytes already in the pipe: cannot happen, splice failed on the first move */
  half_free(h);
  return half_init_buffer(h);
}

/* Move bytes from `from` into h, then from h to `to`. Returns -1 when the connection must be closed. */
static int pump(int from, int to, struct half *h) {
  if (h->pipe[0] >= 0) {
    if (h->len < h->cap && !h->eof) {
      ssize_t n = splice(from, NULL, h->pipe[1], NULL, h->cap - h->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) h->len += (size_t)n;
      else if (n == 0) h->eof = 1;
      else if (errno == EINVAL) return to_buffer(h) < 0 ? -1 : pump(from, to, h);
      else if (!again()) return -1;
    }
    while (h->len > 0) {
      ssize_t n = splice(h->pipe[0], NULL, to, NULL, h->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) h->len -= (size_t)n;
      else if (n < 0 && again()) break;
      else return -1;
    }
  } else if (h->len == 0 && !h->eof) {
    ssize_t n = read(from, h->buf, BUF_BYTES);
    if (n > 0) {
      h->off = 0;
      h->len = (size_t)n;
    } else if (n == 0) {
      h->eof = 1;
    } else if (!again()) {
      return -1;
    }
  }
  while (h->buf && h->len > 0) {
    ssize_t n = send(to, h->buf + h->off, h->len, MSG_NOSIGNAL);
    if (n > 0) {
      h->off += (size_t)n;
      h->len -= (size_t)n;
    } else if (n < 0 && again()) {
      break;
    } else {
      return -1;
    }
  }
  if (h->eof && h->len == 0 && !h->shut) {
    shutdown(to, SHUT_WR);
    h->shut = 1;
  }
  return 0;
}

static short want(const struct half *in, const struct half *out) {
  short ev = 0;
  if (in->len < (in->buf ? 1 : in->cap) && !in->eof) ev |= POLLIN; /* room to read more for the other side */
  if (out->len > 0) ev |= POLLOUT;             /* data waiting to be written here */
  return ev;
}

#endif
