/*
 * harness/common.h: what every mxcts module shares: status codes and the
 * per-thread last error, allocation, growable strings and string lists,
 * files and directories, JSON paths, shell quoting and a seeded PRNG.
 *
 * Errors.  A function that can fail returns an int: 0 on success, a negative
 * MXCTS_E* code on failure, after storing a message with mxcts_set_error().
 * Messages name the input that was wrong: the file, the JSON path or line,
 * the value.  Success never clears the message.
 *
 * Allocation.  mxcts_xmalloc and friends never return NULL: running out of
 * memory prints "mxcts: out of memory" and exits with status 2 (the harness'
 * "internal error" status).  Bad input never gets that far.
 *
 * Ownership.  A returned `char *` or a filled struct is the caller's, freed
 * with the matching *_free (or free() for plain strings); `const char *`
 * results point into the object they came from and live as long as it.
 */
#ifndef MXCTS_COMMON_H
#define MXCTS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* X(name, value, description): the one table of harness status codes. */
#define MXCTS_ERROR_TABLE(X)                                                 \
  X(MXCTS_OK, 0, "success")                                                  \
  X(MXCTS_EINVAL, -1, "invalid input")                                       \
  X(MXCTS_ESYS, -2, "system call failed")                                    \
  X(MXCTS_ENOTFOUND, -3, "not found")

enum mxcts_status {
#define MXCTS__ERROR_ENUM(name, value, desc) name = value,
  MXCTS_ERROR_TABLE(MXCTS__ERROR_ENUM)
#undef MXCTS__ERROR_ENUM
};

#define MXCTS_ERROR_MAX 2048

/* The calling thread's last error ("" if none).  Valid until the next
 * failing mxcts_* call on this thread. */
const char *mxcts_last_error(void);
/* Store a message and return `status` (truncated at MXCTS_ERROR_MAX - 1). */
int mxcts_set_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefix the current message: "<prefix>: <old message>"; returns status. */
int mxcts_prefix_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *mxcts_strerror(int status);

/* --- allocation (never NULL; exits 2 when memory runs out) --------------- */
void *mxcts_xmalloc(size_t n);
void *mxcts_xcalloc(size_t count, size_t size);
void *mxcts_xrealloc(void *p, size_t n);
char *mxcts_xstrdup(const char *s);            /* NULL -> NULL */
char *mxcts_xstrndup(const char *s, size_t n);
char *mxcts_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *arr (of *cap elements of `size` bytes) to hold at least `need`. */
void mxcts_grow(void *arr, size_t *cap, size_t need, size_t size);

/* --- growable string --------------------------------------------------- */
struct mxcts_buf {
  char *s;    /* always NUL-terminated once anything was added; may be NULL */
  size_t len;
  size_t cap;
};
void mxcts_buf_puts(struct mxcts_buf *b, const char *s);
void mxcts_buf_putn(struct mxcts_buf *b, const char *s, size_t n);
void mxcts_buf_printf(struct mxcts_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mxcts_buf_vprintf(struct mxcts_buf *b, const char *fmt, va_list ap);
/* The contents ("" when empty); the buffer keeps ownership. */
const char *mxcts_buf_str(const struct mxcts_buf *b);
/* Hand the string to the caller (never NULL) and reset the buffer. */
char *mxcts_buf_take(struct mxcts_buf *b);
void mxcts_buf_free(struct mxcts_buf *b);

/* --- string list: owns its strings ------------------------------------- */
struct mxcts_strv {
  char **v;   /* NULL-terminated when n > 0 or after mxcts_strv_terminate */
  size_t n;
  size_t cap;
};
void mxcts_strv_push(struct mxcts_strv *l, const char *s);      /* copies */
void mxcts_strv_pushf(struct mxcts_strv *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mxcts_strv_push_take(struct mxcts_strv *l, char *s);       /* takes s */
bool mxcts_strv_contains(const struct mxcts_strv *l, const char *s);
void mxcts_strv_free(struct mxcts_strv *l);

/* --- files ------------------------------------------------------------- */
/* Read a whole file; *out is the caller's (NUL-terminated), *len optional. */
int mxcts_read_file(const char *path, char **out, size_t *len);
/* Write `data` to path atomically enough (tmp + rename). */
int mxcts_write_file(const char *path, const char *data, size_t len);
/* mkdir -p. */
int mxcts_mkdirs(const char *path);
/* Absolute form of path (the file need not exist); caller frees. */
char *mxcts_abspath(const char *path);
/* The directory of the running executable (from /proc/self/exe), or NULL. */
char *mxcts_self_dir(void);
bool mxcts_is_executable(const char *path);
/* The last `max` bytes of a file as printable text (caller frees; "" if the
 * file is missing). */
char *mxcts_file_tail(const char *path, size_t max);

/* --- JSON ---------------------------------------------------------------- */
/* Load a JSON file; on error the message names the file, line and column. */
int mxcts_json_load(const char *path, json_t **out);
/* The same with extra jansson decoding flags (JSON_DECODE_INT_AS_REAL for
 * traces: MXNet writes thread ids as unsigned 64-bit hashes). */
int mxcts_json_load_flags(const char *path, size_t flags, json_t **out);
/* Write a JSON document (indent 2, keys in insertion order). */
int mxcts_json_save(const char *path, const json_t *doc);
/* Look up a dotted path with [i] indexes ("structure.passes[0].engine_ops").
 * Returns a borrowed reference or NULL. */
json_t *mxcts_json_path(json_t *root, const char *path);
/* The JSON type's name for messages ("string", "integer", ...). */
const char *mxcts_json_type_name(const json_t *v);
/* A JSON string of s (new reference; "" for NULL); bytes that are not valid
 * UTF-8 become '?', so text from files can never make it fail. */
json_t *mxcts_json_text(const char *s);
/* A short rendering of a value for messages (caller frees). */
char *mxcts_json_brief(const json_t *v);

/* --- shell quoting ------------------------------------------------------- */
/* Append `s` quoted for a POSIX shell (bare when it is safe). */
void mxcts_shell_quote(struct mxcts_buf *b, const char *s);

/* --- names ----------------------------------------------------------------- */
/* [A-Za-z0-9][A-Za-z0-9_.-]* of at most 64 characters. */
bool mxcts_valid_id(const char *s);
/* A POSIX environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool mxcts_valid_env_name(const char *s);

/* --- PRNG ---------------------------------------------------------------- */
/* splitmix64: a seeded, portable generator (the same stream everywhere). */
uint64_t mxcts_mix64(uint64_t x);
uint64_t mxcts_rng_next(uint64_t *state);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t mxcts_rng_below(uint64_t *state, uint64_t n);
/* A 64-bit hash of a string (FNV-1a), for deriving seeds from names. */
uint64_t mxcts_hash_str(uint64_t h, const char *s);
/* A fresh seed from /dev/urandom (or the clock). */
uint64_t mxcts_random_seed(void);

/* Monotonic time in seconds. */
double mxcts_now(void);

#endif /* MXCTS_COMMON_H */
