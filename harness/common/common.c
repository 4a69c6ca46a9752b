/* Shared helpers of the harness (common/common.h). */
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The thread's last message, whole (a long input's reason is never cut). */
static _Thread_local char *last_error;

const char *mxcts_last_error(void) { return last_error ? last_error : ""; }

static void keep_error(struct mxcts_buf *b) {
  free(last_error);
  last_error = mxcts_buf_take(b);
}

int mxcts_set_error(int status, const char *fmt, ...) {
  struct mxcts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  keep_error(&b);
  return status;
}

int mxcts_prefix_error(int status, const char *fmt, ...) {
  struct mxcts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  mxcts_buf_printf(&b, ": %s", mxcts_last_error());
  keep_error(&b);
  return status;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80; /* no overlong forms */
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf; /* no surrogates, <= U+10FFFF */
  for (size_t i = 1; i < n; i++)
    if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf)) return 0;
  return n;
}

char *mxcts_clean_text(const char *s) {
  struct mxcts_buf b = {0};
  mxcts_buf_puts(&b, "");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
    size_t n = utf8_len(p);
    bool control = n == 1 && (*p < 0x20 || *p == 0x7f) && *p != '\n' && *p != '\t';
    if (n == 0 || control) {
      mxcts_buf_printf(&b, "\\x%02x", *p);
      p++;
    } else {
      mxcts_buf_printf(&b, "%.*s", (int)n, (const char *)p);
      p += n;
    }
  }
  return mxcts_buf_take(&b);
}

/* --- allocation ------------------------------------------------------------ */

static void *oom(void) {
  fputs("mxcts: out of memory\n", stderr);
  exit(2);
}

void *mxcts_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  return p ? p : oom();
}

void *mxcts_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  return p ? p : oom();
}

void *mxcts_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  return q ? q : oom();
}

char *mxcts_xstrdup(const char *s) {
  return s ? mxcts_xstrndup(s, strlen(s)) : NULL;
}

char *mxcts_xstrndup(const char *s, size_t n) {
  char *p = mxcts_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *mxcts_xasprintf(const char *fmt, ...) {
  struct mxcts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  return mxcts_buf_take(&b);
}

void mxcts_grow(void *arr, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return;
  size_t n = *cap ? *cap : 8;
  while (n < need) n *= 2;
  void **p = arr;
  *p = mxcts_xrealloc(*p, n * size);
  *cap = n;
}

/* --- growable string --------------------------------------------------------- */

static void buf_putn(struct mxcts_buf *b, const char *s, size_t n) {
  mxcts_grow(&b->s, &b->cap, b->len + n + 1, 1);
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void mxcts_buf_puts(struct mxcts_buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

void mxcts_buf_vprintf(struct mxcts_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  mxcts_grow(&b->s, &b->cap, b->len + (size_t)n + 1, 1);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void mxcts_buf_printf(struct mxcts_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

const char *mxcts_buf_str(const struct mxcts_buf *b) { return b->s ? b->s : ""; }

char *mxcts_buf_take(struct mxcts_buf *b) {
  char *s = b->s ? b->s : mxcts_xstrdup("");
  b->s = NULL;
  b->len = b->cap = 0;
  return s;
}

void mxcts_buf_free(struct mxcts_buf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}

/* --- string list --------------------------------------------------------------- */

void mxcts_strv_push_take(struct mxcts_strv *l, char *s) {
  mxcts_grow(&l->v, &l->cap, l->n + 2, sizeof *l->v);
  l->v[l->n++] = s;
  l->v[l->n] = NULL;
}

void mxcts_strv_push(struct mxcts_strv *l, const char *s) {
  mxcts_strv_push_take(l, mxcts_xstrdup(s));
}

void mxcts_strv_pushf(struct mxcts_strv *l, const char *fmt, ...) {
  struct mxcts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  mxcts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  mxcts_strv_push_take(l, mxcts_buf_take(&b));
}

bool mxcts_strv_contains(const struct mxcts_strv *l, const char *s) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0) return true;
  return false;
}

void mxcts_strv_free(struct mxcts_strv *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* --- files ------------------------------------------------------------------------ */

FILE *mxcts_open_regular(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block the open */
  struct stat st;
  if (fd < 0) {
    mxcts_set_error(MXR_ESYS, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    mxcts_set_error(MXR_EINVAL, "%s: not a regular file%s", path, S_ISDIR(st.st_mode) ? " (a directory)" : "");
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    mxcts_set_error(MXR_ESYS, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
  }
  return f;
}

int mxcts_read_file(const char *path, char **out, size_t *len) {
  FILE *f = mxcts_open_regular(path);
  if (!f) return MXR_ESYS;
  struct mxcts_buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_putn(&b, chunk, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    mxcts_buf_free(&b);
    return mxcts_set_error(MXR_ESYS, "%s: read error", path);
  }
  if (len) *len = b.len;
  *out = mxcts_buf_take(&b);
  return 0;
}

int mxcts_write_file(const char *path, const char *data, size_t len) {
  char *tmp = mxcts_xasprintf("%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    int rc = mxcts_set_error(MXR_ESYS, "%s: cannot create: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
  }
  bool ok = fwrite(data, 1, len, f) == len;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    int rc = mxcts_set_error(MXR_ESYS, "%s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return rc;
  }
  free(tmp);
  return 0;
}

int mxcts_mkdirs(const char *path) {
  char *p = mxcts_xstrdup(path);
  for (char *s = p + 1; ; s++) {
    if (*s != '/' && *s != '\0') continue;
    char c = *s;
    *s = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      int rc = mxcts_set_error(MXR_ESYS, "%s: cannot create directory: %s", p, strerror(errno));
      free(p);
      return rc;
    }
    *s = c;
    if (c == '\0') break;
  }
  struct stat st;
  int bad = stat(path, &st) != 0 || !S_ISDIR(st.st_mode);
  free(p);
  return bad ? mxcts_set_error(MXR_ESYS, "%s: not a directory", path) : 0;
}

char *mxcts_abspath(const char *path) {
  char resolved[PATH_MAX];
  if (realpath(path, resolved)) return mxcts_xstrdup(resolved);
  if (path[0] == '/') return mxcts_xstrdup(path);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return mxcts_xstrdup(path);
  return mxcts_xasprintf("%s/%s", cwd, path);
}

char *mxcts_self_dir(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = '\0';
  return mxcts_xstrdup(exe[0] ? exe : "/");
}

bool mxcts_is_executable(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *mxcts_file_tail(const char *path, size_t max) {
  FILE *f = fopen(path, "rb");
  if (!f) return mxcts_xstrdup("");
  if (fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    if (size > (long)max) fseek(f, size - (long)max, SEEK_SET);
    else rewind(f);
  }
  char *s = mxcts_xmalloc(max + 1);
  size_t n = fread(s, 1, max, f);
  fclose(f);
  s[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 32 ? s[i] != '\n' && s[i] != '\t' : (unsigned char)s[i] >= 0x7f)
      s[i] = '?';
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ')) s[--n] = '\0';
  return s;
}

/* --- shell quoting --------------------------------------------------------------------- */

void mxcts_shell_quote(struct mxcts_buf *b, const char *s) {
  bool safe = *s != '\0';
  for (const char *p = s; *p && safe; p++)
    safe = isalnum((unsigned char)*p) || strchr("_-./=:,+@%", *p);
  if (safe) {
    mxcts_buf_puts(b, s);
    return;
  }
  mxcts_buf_puts(b, "'");
  for (const char *p = s; *p; p++) {
    if (*p == '\'') mxcts_buf_puts(b, "'\\''");
    else buf_putn(b, p, 1);
  }
  mxcts_buf_puts(b, "'");
}

/* --- names --------------------------------------------------------------------------------- */

bool mxcts_valid_id(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || !isalnum((unsigned char)s[0])) return false;
  for (size_t i = 1; i < n; i++)
    if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i])) return false;
  return true;
}

bool mxcts_valid_env_name(const char *s) {
  if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return true;
}

/* --- PRNG ----------------------------------------------------------------------------------- */

uint64_t mxcts_mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t mxcts_rng_next(uint64_t *state) {
  uint64_t r = mxcts_mix64(*state);
  *state += 0x9e3779b97f4a7c15ULL;
  return r;
}

double mxcts_rng_uniform(uint64_t *state) {
  return (double)(mxcts_rng_next(state) >> 11) * 0x1.0p-53;
}

uint64_t mxcts_rng_below(uint64_t *state, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = mxcts_rng_next(state); while (r >= limit);
  return r % n;
}

uint64_t mxcts_hash_str(uint64_t h, const char *s) {
  if (h == 0) h = 0xcbf29ce484222325ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t mxcts_random_seed(void) {
  uint64_t seed = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed) seed = 0;
    close(fd);
  }
  if (seed == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = mxcts_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid());
  }
  return seed;
}

double mxcts_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mxcts_sleep(double s) {
  if (!(s > 0)) return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}
