/*
 * The floor of bench/proxy-bench.mjs: the least a CONNECT proxy can cost on this machine. It checks nothing and
 * resolves nothing: every CONNECT, whatever it names, is tunnelled to the one upstream given on the command line,
 * by two threads per connection copying with blocking read(2)/write(2), so each byte is passed on the moment the
 * kernel has it. Not part of the server; built into a temporary directory by the bench.
 *
 *   floor-proxy <upstream-port>      (on 127.0.0.1; listens on a free port of 127.0.0.1 and prints it)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int upstream_port;

struct pipe_end {
  int from, to;
};

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void *copy(void *arg) {
  struct pipe_end *e = arg;
  char buf[65536];
  ssize_t n;
  while ((n = read(e->from, buf, sizeof buf)) > 0) write_all(e->to, buf, (size_t)n);
  shutdown(e->to, SHUT_WR);
  return NULL;
}

static void *serve(void *arg) {
  int client = (int)(long)arg;
  char head[8192];
  size_t len = 0;
  char *end = NULL;
  while (!end && len < sizeof head - 1) {
    ssize_t n = read(client, head + len, sizeof head - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
    head[len] = 0;
    end = strstr(head, "\r\n\r\n");
  }
  int up = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)upstream_port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  if (end && up >= 0 && connect(up, (struct sockaddr *)&a, sizeof a) == 0) {
    setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
    write_all(client, ok, sizeof ok - 1);
    end += 4;
    write_all(up, end, len - (size_t)(end - head)); /* bytes sent right behind the head */
    struct pipe_end out = {client, up}, back = {up, client};
    pthread_t t;
    pthread_create(&t, NULL, copy, &out);
    copy(&back);
    pthread_join(t, NULL);
  }
  if (up >= 0) close(up);
  close(client);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: floor-proxy <upstream-port>\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  upstream_port = atoi(argv[1]);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0 ||
      getsockname(s, (struct sockaddr *)&a, &alen) < 0) {
    perror("floor-proxy");
    return 1;
  }
  printf("%d\n", ntohs(a.sin_port));
  fflush(stdout);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    pthread_t t;
    if (pthread_create(&t, NULL, serve, (void *)(long)c) == 0) pthread_detach(t);
    else close(c);
  }
}
