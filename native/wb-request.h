/*
 * Reading one request from descriptor 0, shared by wb-exec.c and wb-stat.c: both take requests that start with
 * four magic bytes and little-endian 32-bit numbers, and both end with status 125 and one line on standard
 * error when a request is not one the server sent. Define WB_PROGRAM (the program's name) before including it.
 */
#ifndef WB_REQUEST_H
#define WB_REQUEST_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static void fail(const char *what) {
  fprintf(stderr, WB_PROGRAM ": %s\n", what);
  _exit(125);
}

/* Where requests are read from: descriptor 0 unless the program says otherwise (wb-exec --status-fd). */
static int request_fd = 0;

/* Read exactly n bytes; 0 on success, 1 on end of input before the first byte (when allowed), else fail(). */
static int read_all(unsigned char *p, size_t n, int eof_ok) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(request_fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("cannot read the request");
    if (r == 0) {
      if (got == 0 && eof_ok) return 1;
      fail("the request ended early");
    }
    got += (size_t)r;
  }
  return 0;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
