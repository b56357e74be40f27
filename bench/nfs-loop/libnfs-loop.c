/* libnfs-loop URL SECONDS DEPTH BS MODE: the floor volbench's NFS client is
 * measured against (bench/nfs-vs-libnfs.sh). A C loop over libnfs's async
 * API (nfs_pread_async / nfs_pwrite_async, libnfs 4.0 as Debian ships it):
 * DEPTH requests of BS bytes kept in flight on one connection to the file
 * URL names, for SECONDS; MODE is randread (uniform aligned offsets), read
 * or write (sequential, wrapping at the file's end). Prints
 * "ops=N bytes=B seconds=S cpu=C" (CPU: this process's user + system). */
#include <inttypes.h>
#include <sys/time.h>
#include <nfsc/libnfs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static struct nfs_context *nfs;
static struct nfsfh *fh;
static uint64_t size, bs, next_off, ops, bytes, seed = 88172645463325252ull;
static int mode, inflight, stopping, failed;
static char *wbuf;

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

static uint64_t offset(void) {
  if (mode == 0) {
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    return (seed % (size / bs)) * bs;
  }
  uint64_t o = next_off;
  next_off = (next_off + bs >= size) ? 0 : next_off + bs;
  return o;
}

static void issue(void);

static void done(int err, struct nfs_context *n, void *data, void *priv) {
  (void)n; (void)data; (void)priv;
  inflight--;
  if (err < 0) {
    fprintf(stderr, "libnfs-loop: %s\n", nfs_get_error(nfs));
    failed = 1;
    return;
  }
  ops++;
  bytes += (uint64_t)err;
  if (!stopping) issue();
}

static void issue(void) {
  int r = mode == 2 ? nfs_pwrite_async(nfs, fh, offset(), bs, wbuf, done, NULL)
                    : nfs_pread_async(nfs, fh, offset(), bs, done, NULL);
  if (r != 0) {
    fprintf(stderr, "libnfs-loop: queue: %s\n", nfs_get_error(nfs));
    failed = 1;
    return;
  }
  inflight++;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: libnfs-loop URL SECONDS DEPTH BS randread|read|write\n");
    return 2;
  }
  double secs = atof(argv[2]);
  int depth = atoi(argv[3]);
  bs = strtoull(argv[4], NULL, 10);
  mode = strcmp(argv[5], "randread") == 0 ? 0 : strcmp(argv[5], "read") == 0 ? 1 : 2;
  nfs = nfs_init_context();
  struct nfs_url *url = nfs_parse_url_full(nfs, argv[1]);
  if (!url) { fprintf(stderr, "libnfs-loop: %s\n", nfs_get_error(nfs)); return 1; }
  if (nfs_mount(nfs, url->server, url->path) != 0 ||
      nfs_open(nfs, url->file, mode == 2 ? 2 /* O_RDWR */ : 0, &fh) != 0) {
    fprintf(stderr, "libnfs-loop: %s\n", nfs_get_error(nfs));
    return 1;
  }
  struct nfs_stat_64 st;
  if (nfs_fstat64(nfs, fh, &st) != 0 || st.nfs_size < bs) {
    fprintf(stderr, "libnfs-loop: the file is smaller than one block\n");
    return 1;
  }
  size = st.nfs_size;
  wbuf = malloc(bs);
  memset(wbuf, 0x5a, bs);
  double t0 = now(), c0 = cpu();
  for (int i = 0; i < depth; i++) issue();
  while (inflight > 0 && !failed) {
    if (!stopping && now() - t0 >= secs) stopping = 1;
    struct pollfd p = {.fd = nfs_get_fd(nfs), .events = nfs_which_events(nfs)};
    if (poll(&p, 1, 100) < 0) break;
    if (nfs_service(nfs, p.revents) < 0) {
      fprintf(stderr, "libnfs-loop: %s\n", nfs_get_error(nfs));
      return 1;
    }
  }
  double t = now() - t0, c = cpu() - c0;
  printf("ops=%" PRIu64 " bytes=%" PRIu64 " seconds=%.3f cpu=%.3f\n", ops, bytes, t, c);
  return failed;
}
