/* libnfs-loop URL SECONDS DEPTH BS MODE [bare]: the floor volbench's NFS
 * client is measured against (bench/nfs-vs-libnfs.sh). A C loop over
 * libnfs's async API (nfs_pread_async / nfs_pwrite_async, libnfs 4.0 as
 * Debian ships it): DEPTH requests of BS bytes kept in flight on one
 * connection to the file URL names, for SECONDS; MODE is randread (uniform
 * aligned offsets), read or write (sequential, wrapping at the file's end).
 * Prints "ops=N bytes=B seconds=S cpu=C" (CPU: this process's user +
 * system).
 *
 * Each request has its own buffer of BS bytes, as an application's (and
 * fio's io_u) have: a read's data is copied into it in the callback, which
 * is what fio's nfs engine does with libnfs 4.0's pread (the data arrives
 * in libnfs's own buffer), and a write's data is made in it before it is
 * queued, with the first 16 bytes of every 512-byte sector set to the
 * offset and a counter, as fio's default scramble_buffers does, so no two
 * writes carry the same bytes (volbench's do not either). With "bare" the
 * loop does neither: reads leave the data in libnfs's buffer and every
 * write sends one constant buffer, the least any client can do. */
#include <inttypes.h>
#include <stdint.h>
#include <sys/time.h>
#include <nfsc/libnfs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>

static struct nfs_context *nfs;
static struct nfsfh *fh;
static uint64_t size, bs, next_off, ops, bytes, seed = 88172645463325252ull;
static int mode, inflight, stopping, failed, bare;
static char *bufs; /* DEPTH buffers of BS bytes, one per request slot */
static int *free_slots, nfree;

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
  (void)n;
  int slot = (int)(intptr_t)priv;
  inflight--;
  free_slots[nfree++] = slot;
  if (err < 0) {
    fprintf(stderr, "libnfs-loop: %s\n", nfs_get_error(nfs));
    failed = 1;
    return;
  }
  if (mode != 2 && !bare) memcpy(bufs + (size_t)slot * bs, data, (size_t)err);
  ops++;
  bytes += (uint64_t)err;
  if (!stopping) issue();
}

/* The write's bytes: every sector's first 16 set to where it goes and a
 * counter (fio's scramble_buffers does the like). */
static void scramble(char *b, uint64_t off) {
  for (uint64_t s = 0; s + 16 <= bs; s += 512) {
    uint64_t a = off + s, c = ops + (uint64_t)inflight;
    memcpy(b + s, &a, 8);
    memcpy(b + s + 8, &c, 8);
  }
}

static void issue(void) {
  int slot = free_slots[--nfree];
  char *b = bufs + (size_t)slot * bs;
  uint64_t off = offset();
  int r;
  if (mode == 2) {
    if (!bare) scramble(b, off);
    r = nfs_pwrite_async(nfs, fh, off, bs, bare ? bufs : b, done, (void *)(intptr_t)slot);
  } else {
    r = nfs_pread_async(nfs, fh, off, bs, done, (void *)(intptr_t)slot);
  }
  if (r != 0) {
    fprintf(stderr, "libnfs-loop: queue: %s\n", nfs_get_error(nfs));
    failed = 1;
    return;
  }
  inflight++;
}

int main(int argc, char **argv) {
  int nodelay = 0;
  for (int i = 6; i < argc; i++) {
    if (strcmp(argv[i], "bare") == 0) bare = 1;
    else if (strcmp(argv[i], "nodelay") == 0) nodelay = 1;
    else argc = 0;
  }
  if (argc < 6) {
    fprintf(stderr, "usage: libnfs-loop URL SECONDS DEPTH BS randread|read|write [bare] [nodelay]\n");
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
  /* libnfs leaves Nagle's algorithm on; volbench's client (as the kernel's
   * NFS client) sets TCP_NODELAY, so a request goes out when it is made. On
   * loopback that also moves CPU between the two processes: a request held
   * back by Nagle is sent when the server's ACK comes in, in the server's
   * context, so the client is charged less for it. */
  if (nodelay) {
    int one = 1;
    if (setsockopt(nfs_get_fd(nfs), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
      perror("libnfs-loop: TCP_NODELAY");
      return 1;
    }
  }
  if (depth < 1 || depth > 4096) {
    fprintf(stderr, "libnfs-loop: DEPTH must be 1 to 4096\n");
    return 2;
  }
  bufs = malloc((size_t)depth * bs);
  free_slots = malloc(sizeof(int) * (size_t)depth);
  if (!bufs || !free_slots) {
    fprintf(stderr, "libnfs-loop: out of memory\n");
    return 1;
  }
  memset(bufs, 0x5a, (size_t)depth * bs);
  for (int i = 0; i < depth; i++) free_slots[nfree++] = i;
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
