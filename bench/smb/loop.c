/* bench/smb/loop.c: the best other SMB client here, as a bare C loop over
 * libsmbclient (Samba's own client library): one thread, synchronous
 * reads or writes of one block size at random or sequential offsets of
 * one file, for a time. Prints one JSON line: ops, bytes, seconds and this
 * process's CPU seconds (getrusage), as examples/smb_bench.rs does.
 *
 *   loop URL randread|randwrite|read|write BS SIZE SECONDS
 * URL is smb://SERVER:PORT/SHARE/FILE; the user is SMB_USER, the password
 * VOLBENCH_SMB_PASSWORD (never an argument). */
#include <fcntl.h>
#include <libsmbclient.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void auth(const char *srv, const char *shr, char *wg, int wglen, char *un, int unlen, char *pw, int pwlen) {
  (void)srv; (void)shr; (void)wg; (void)wglen;
  const char *u = getenv("SMB_USER"), *p = getenv("VOLBENCH_SMB_PASSWORD");
  snprintf(un, unlen, "%s", u ? u : "");
  snprintf(pw, pwlen, "%s", p ? p : "");
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: loop URL RW BS SIZE SECONDS\n"); return 2; }
  const char *url = argv[1], *rw = argv[2];
  long bs = atol(argv[3]);
  long long size = atoll(argv[4]);
  double secs = atof(argv[5]);
  int writing = strstr(rw, "write") != NULL, random = strncmp(rw, "rand", 4) == 0;
  SMBCCTX *ctx = smbc_new_context();
  if (!ctx) { perror("smbc_new_context"); return 1; }
  smbc_setFunctionAuthData(ctx, auth);
  smbc_setOptionUseKerberos(ctx, 0);
  smbc_setOptionFallbackAfterKerberos(ctx, 1);
  if (!smbc_init_context(ctx)) { perror("smbc_init_context"); return 1; }
  smbc_set_context(ctx);
  int fd = smbc_open(url, writing ? O_RDWR : O_RDONLY, 0);
  if (fd < 0) { perror("smbc_open"); return 1; }
  char *buf = malloc(bs);
  memset(buf, 0xa5, bs);
  long long blocks = size / bs, seq = 0, ops = 0, bytes = 0, errors = 0;
  unsigned long long x = 42;
  double c0 = cpu(), t0 = now(), until = t0 + secs;
  while (now() < until) {
    long long b;
    if (random) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; b = x % blocks; } else { b = seq; seq = (seq + 1) % blocks; }
    if (smbc_lseek(fd, b * bs, SEEK_SET) < 0) { errors++; continue; }
    ssize_t n = writing ? smbc_write(fd, buf, bs) : smbc_read(fd, buf, bs);
    if (n != bs) errors++; else bytes += n;
    ops++;
  }
  double t = now() - t0, c = cpu() - c0;
  smbc_close(fd);
  printf("{\"client\":\"libsmbclient\",\"rw\":\"%s\",\"bs\":%ld,\"qd\":1,\"channels\":1,\"ops\":%lld,\"bytes\":%lld,\"errors\":%lld,\"seconds\":%.4f,\"cpu\":%.4f}\n",
         rw, bs, ops, bytes, errors, t, c);
  return 0;
}
