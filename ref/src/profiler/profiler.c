/*
 * The profiler's public API (mxref/profiler.h): configuration, state, dumps,
 * aggregate statistics, the periodic dump timer, autostart, and the dump at
 * process exit.  MXNet 1.9.1 semantics (src/profiler/profiler.cc,
 * src/c_api/c_api_profile.cc); departures are listed in docs/profiler.md.
 *
 * One control mutex (P.mu) serialises configuration, state changes and dumps;
 * the recorder's hot path never takes it (it reads atomics set by publish()).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/threads.h"
#include "mxref/config.h"
#include "mxref/error.h"
#include "mxref/profiler.h"
#include "profiler/profiler_internal.h"

/* MXNet's Profiler::mode_ when MXNET_PROFILER_MODE is unset. */
#define MXNET_DEFAULT_MODE (MXR_PROFILE_SYMBOLIC | MXR_PROFILE_API | MXR_PROFILE_MEMORY)
#define DEFAULT_FILENAME "profile.json"
#define MAX_PERIOD_S 1e6

struct dump_timer {
  pthread_t thread;
  double period;
  bool stop;                /* under P.mu */
  struct dump_timer *next;  /* on P.to_join */
};

static struct {
  pthread_mutex_t mu;
  pthread_cond_t timer_cv; /* CLOCK_MONOTONIC; wakes timers to stop */
  int state;
  bool paused;
  unsigned mode;
  char *filename; /* NULL: DEFAULT_FILENAME */
  bool continuous;
  double period;
  bool aggregate;
  bool output_enabled; /* MXNet's enable_output_: a dump has something to do */
  bool session_open;   /* continuous: the file holds a complete trace to append to */
  long tail_off;       /* where that file's closing starts */
  mxr_engine *default_attached;
  bool exit_registered;
  struct dump_timer *timer;
  struct dump_timer *to_join; /* stopped timers, joined after P.mu is released */
} P = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic int g_state;
static _Atomic unsigned g_mode;
static atomic_bool g_aggregate_on;

static const struct mxr_engine_hooks profiler_hooks = {NULL, mxr__prof_op_begin,
                                                       mxr__prof_op_end};

/* ---- one-time setup ------------------------------------------------------------ */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;
static char init_message[MXR_ERROR_MAX];

/* MXNET_PROFILER_MODE: MXNet's bitmask (symbolic 1, imperative 2, api 4,
 * memory 8).  0, which is also what an unset variable parses to, stands for
 * MXNet's default when the variable is unset (symbolic, api, memory). */
static unsigned initial_mode(void) {
  int m = mxr_config_get()->profiler_mode;
  return m > 0 ? (unsigned)m : MXNET_DEFAULT_MODE;
}

static void fork_prepare(void) { mxr_mutex_lock(&P.mu); }
static void fork_parent(void) { mxr_mutex_unlock(&P.mu); }
/* The child has no timer thread, and must not write into the parent's
 * trace: it starts stopped, with output disabled. */
static void fork_child(void) {
  P.timer = NULL;
  P.to_join = NULL;
  P.state = MXR_PROFILER_STOPPED;
  P.output_enabled = false;
  P.session_open = false;
  atomic_store(&g_state, MXR_PROFILER_STOPPED);
  mxr__prof_set_active(0);
  mxr_mutex_unlock(&P.mu);
}

static void init_profiler(void) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc == 0) {
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0) rc = pthread_cond_init(&P.timer_cv, &attr);
    MXR_PTHREAD_CHECK(pthread_condattr_destroy(&attr));
  }
  if (rc == 0) rc = pthread_atfork(fork_prepare, fork_parent, fork_child);
  if (rc != 0) {
    init_status = MXR_ESYS;
    snprintf(init_message, sizeof init_message, "profiler: setup failed: %s", strerror(rc));
    return;
  }
  P.mode = initial_mode();
  P.period = 1.0;
  atomic_store(&g_mode, P.mode);
}

static int ensure_init(void) {
  MXR_PTHREAD_CHECK(pthread_once(&init_once, init_profiler));
  if (init_status) return mxr_set_error(init_status, "%s", init_message);
  return 0;
}

static const char *filename(void) { return P.filename ? P.filename : DEFAULT_FILENAME; }

/* Make the hot path see the state.  P.mu held. */
static void publish(void) {
  atomic_store(&g_state, P.state);
  atomic_store(&g_mode, P.mode);
  atomic_store(&g_aggregate_on, P.aggregate);
  mxr__prof_set_aggregate(P.aggregate);
  mxr__prof_set_active(P.state == MXR_PROFILER_RUNNING && !P.paused ? P.mode : 0);
}

/* ---- dumping -------------------------------------------------------------------- */

/* Write what was recorded.  P.mu held. */
static int dump_locked(bool finished) {
  const char *fn = filename();
  struct prof_chunk_list recs = {NULL, NULL, 0};
  mxr__prof_collect(&recs);
  bool fresh = !P.session_open || !P.continuous;
  if (!fresh && recs.nrecs == 0) { /* the file is complete already */
    if (finished) P.session_open = false;
    return 0;
  }
  FILE *f = NULL;
  if (!fresh) {
    f = fopen(fn, "r+");
    if (f && fseek(f, P.tail_off, SEEK_SET) != 0) {
      fclose(f);
      f = NULL;
    }
    if (!f) fresh = true; /* removed or replaced meanwhile: start again */
  }
  if (fresh) {
    f = fopen(fn, "w");
    if (!f) {
      int e = errno;
      mxr__prof_putback(&recs); /* kept for the next dump */
      return mxr_set_error(MXR_ESYS, "profiler: cannot open '%s' for writing: %s", fn,
                           strerror(e));
    }
  }
  int st = fresh ? mxr__trace_write_head(f, fn) : 0;
  if (!st) st = mxr__trace_write_events(f, &recs, fn);
  long tail = st ? -1 : ftell(f);
  if (!st && tail < 0)
    st = mxr_set_error(MXR_ESYS, "profiler: error writing '%s': %s", fn, strerror(errno));
  if (!st) st = mxr__trace_write_tail(f, fn);
  if (!st && fflush(f) != 0)
    st = mxr_set_error(MXR_ESYS, "profiler: error writing '%s': %s", fn, strerror(errno));
  if (!st && !fresh) {
    long end = ftell(f);
    if (end < 0 || ftruncate(fileno(f), (off_t)end) != 0)
      st = mxr_set_error(MXR_ESYS, "profiler: error writing '%s': %s", fn, strerror(errno));
  }
  if (fclose(f) != 0 && !st)
    st = mxr_set_error(MXR_ESYS, "profiler: error writing '%s': %s", fn, strerror(errno));
  mxr__prof_chunks_free(&recs);
  if (st) {
    P.session_open = false; /* the next dump starts a new file */
    return st;
  }
  P.tail_off = tail;
  P.session_open = P.continuous && !finished;
  return 0;
}

/* ---- the dump timer ------------------------------------------------------------- */

static void *timer_main(void *arg) {
  struct dump_timer *tm = arg;
  mxr_mutex_lock(&P.mu);
  while (!tm->stop) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    double p = tm->period < MAX_PERIOD_S ? tm->period : MAX_PERIOD_S;
    long long ns = (long long)dl.tv_nsec + (long long)((p - floor(p)) * 1e9);
    dl.tv_sec += (time_t)floor(p) + (time_t)(ns / 1000000000LL);
    dl.tv_nsec = (long)(ns % 1000000000LL);
    int rc = 0;
    while (!tm->stop && rc != ETIMEDOUT) {
      rc = pthread_cond_timedwait(&P.timer_cv, &P.mu, &dl);
      if (rc != 0 && rc != ETIMEDOUT)
        mxr__pthread_fatal("pthread_cond_timedwait(&P.timer_cv, &P.mu, &dl)", rc, __FILE__,
                           __LINE__);
    }
    if (!tm->stop && P.output_enabled) (void)dump_locked(false); /* as MXNet: errors dropped */
  }
  mxr_mutex_unlock(&P.mu);
  return NULL;
}

/* P.mu held. */
static int start_timer_locked(double period, struct dump_timer **out) {
  struct dump_timer *tm = calloc(1, sizeof *tm);
  if (!tm) return mxr_set_error(MXR_ENOMEM, "profiler: out of memory starting the dump timer");
  tm->period = period;
  int rc = pthread_create(&tm->thread, NULL, timer_main, tm);
  if (rc != 0) {
    free(tm);
    return mxr_set_error(MXR_ESYS, "profiler: cannot start the dump timer thread: %s",
                         strerror(rc));
  }
  *out = tm;
  return 0;
}

/* P.mu held; the thread is joined by unlock_and_join(). */
static void stop_timer_locked(void) {
  struct dump_timer *tm = P.timer;
  if (!tm) return;
  P.timer = NULL;
  tm->stop = true;
  tm->next = P.to_join;
  P.to_join = tm;
  mxr_cond_broadcast(&P.timer_cv);
}

static void unlock_and_join(void) {
  struct dump_timer *list = P.to_join;
  P.to_join = NULL;
  mxr_mutex_unlock(&P.mu);
  while (list) {
    struct dump_timer *n = list->next;
    MXR_PTHREAD_CHECK(pthread_join(list->thread, NULL));
    free(list);
    list = n;
  }
}

/* ---- exit and autostart --------------------------------------------------------- */

/* As MXNet's ~Profiler: a final dump if output is enabled. */
static void dump_at_exit(void) {
  int saved = errno;
  mxr_mutex_lock(&P.mu);
  stop_timer_locked();
  if (P.output_enabled) {
    if (dump_locked(true) == 0)
      P.output_enabled = false;
    else
      fprintf(stderr, "libmxref: profiler: no trace written at exit: %s\n", mxr_last_error());
  }
  unlock_and_join();
  errno = saved;
}

/* MXNET_PROFILER_AUTOSTART: start when the library loads (MXNet starts in
 * its Profiler's constructor, at first use of the library), so that the
 * whole run is recorded and profile.json is written at exit. */
__attribute__((constructor)) static void autostart_at_load(void) {
  int saved = errno;
  if (mxr_config_get()->profiler_autostart && mxr_profiler_set_state(MXR_PROFILER_RUNNING) != 0)
    fprintf(stderr, "libmxref: MXNET_PROFILER_AUTOSTART: profiler not started: %s\n",
            mxr_last_error());
  errno = saved;
}

/* ---- the API -------------------------------------------------------------------- */

struct parsed_config {
  bool all, symbolic, imperative, memory, api, continuous, aggregate;
  double period;
  const char *period_text;
  const char *filename;
};

static int parse_bool(const char *key, const char *val, bool *out) {
  if (strcasecmp(val, "true") == 0 || strcmp(val, "1") == 0) {
    *out = true;
    return 0;
  }
  if (strcasecmp(val, "false") == 0 || strcmp(val, "0") == 0) {
    *out = false;
    return 0;
  }
  return mxr_set_error(MXR_EINVAL,
                       "profiler config: %s='%s' is not a boolean (True, False, 1 or 0)", key, val);
}

static const char accepted_keys[] =
    "profile_all, profile_symbolic, profile_imperative, profile_memory, profile_api, filename, "
    "continuous_dump, dump_period, aggregate_stats, profile_process";

static int parse_config(int n, const char *const *keys, const char *const *vals,
                        struct parsed_config *c) {
  *c = (struct parsed_config){.all = false, .symbolic = true, .imperative = true, .memory = true,
                              .api = true, .continuous = true, .aggregate = false, .period = 1.0,
                              .period_text = "1.0", .filename = DEFAULT_FILENAME};
  if (n < 0) return mxr_set_error(MXR_EINVAL, "profiler config: num_params is %d", n);
  if (n > 0 && (!keys || !vals))
    return mxr_set_error(MXR_EINVAL, "profiler config: keys or vals is NULL");
  for (int i = 0; i < n; i++) {
    const char *k = keys[i], *v = vals[i];
    if (!k) return mxr_set_error(MXR_EINVAL, "profiler config: key %d is NULL", i);
    if (!v) return mxr_set_error(MXR_EINVAL, "profiler config: the value of '%s' is NULL", k);
    int st = 0;
    if (strcmp(k, "profile_all") == 0) {
      st = parse_bool(k, v, &c->all);
    } else if (strcmp(k, "profile_symbolic") == 0) {
      st = parse_bool(k, v, &c->symbolic);
    } else if (strcmp(k, "profile_imperative") == 0) {
      st = parse_bool(k, v, &c->imperative);
    } else if (strcmp(k, "profile_memory") == 0) {
      st = parse_bool(k, v, &c->memory);
    } else if (strcmp(k, "profile_api") == 0) {
      st = parse_bool(k, v, &c->api);
    } else if (strcmp(k, "continuous_dump") == 0) {
      st = parse_bool(k, v, &c->continuous);
    } else if (strcmp(k, "aggregate_stats") == 0) {
      st = parse_bool(k, v, &c->aggregate);
    } else if (strcmp(k, "filename") == 0) {
      if (v[0] == '\0') return mxr_set_error(MXR_EINVAL, "profiler config: filename='' is empty");
      c->filename = v;
    } else if (strcmp(k, "dump_period") == 0) {
      char *end = NULL;
      errno = 0;
      double d = strtod(v, &end);
      if (end == v || *end != '\0' || errno == ERANGE || isnan(d))
        return mxr_set_error(MXR_EINVAL, "profiler config: dump_period='%s' is not a number of "
                             "seconds", v);
      c->period = d;
      c->period_text = v;
    } else if (strcmp(k, "profile_process") == 0) {
      if (strcmp(v, "server") == 0)
        return mxr_set_error(MXR_EINVAL, "profiler config: profile_process='server' needs a "
                             "distributed kvstore, which the reference runtime does not have");
      if (strcmp(v, "worker") != 0)
        return mxr_set_error(MXR_EINVAL, "profiler config: profile_process='%s' is not 'worker' "
                             "or 'server'", v);
    } else {
      return mxr_set_error(MXR_EINVAL, "profiler config: unknown key '%s' (value '%s'); "
                           "accepted keys: %s", k, v, accepted_keys);
    }
    if (st) return st;
  }
  if (c->continuous && !(c->period > 0))
    return mxr_set_error(MXR_EINVAL, "profiler config: dump_period='%s' must be greater than 0 "
                         "when continuous_dump is set", c->period_text);
  return 0;
}

int mxr_profiler_set_config(int num_params, const char *const *keys, const char *const *vals) {
  int st = ensure_init();
  if (st) return st;
  struct parsed_config c;
  st = parse_config(num_params, keys, vals, &c);
  if (st) return st;
  unsigned mode = 0;
  if (c.symbolic || c.all) mode |= MXR_PROFILE_SYMBOLIC;
  if (c.imperative || c.all)
    mode |= MXR_PROFILE_IMPERATIVE;
  if (c.api || c.all) mode |= MXR_PROFILE_API;
  if (c.memory || c.all) mode |= MXR_PROFILE_MEMORY;
  char *fn = strdup(c.filename);
  if (!fn) return mxr_set_error(MXR_ENOMEM, "profiler config: out of memory");

  mxr_mutex_lock(&P.mu);
  struct dump_timer *timer = NULL;
  if (c.continuous) { /* first, so that a failure changes nothing */
    st = start_timer_locked(c.period, &timer);
    if (st) {
      mxr_mutex_unlock(&P.mu);
      free(fn);
      return st;
    }
  }
  stop_timer_locked();
  P.timer = timer;
  P.mode = mode;
  free(P.filename);
  P.filename = fn;
  (void)unlink(fn); /* MXNet removes the output file to start */
  P.session_open = false;
  P.continuous = c.continuous;
  P.period = c.period;
  if (P.aggregate && !c.aggregate) mxr__prof_aggregate_clear();
  P.aggregate = c.aggregate;
  publish();
  if (c.continuous && P.output_enabled) (void)dump_locked(false); /* as MXNet */
  unlock_and_join();
  return 0;
}

int mxr_profiler_get_config(struct mxr_profiler_config *out) {
  if (!out) return mxr_set_error(MXR_EINVAL, "mxr_profiler_get_config: out is NULL");
  int st = ensure_init();
  if (st) return st;
  mxr_mutex_lock(&P.mu);
  out->mode = P.mode;
  snprintf(out->filename, sizeof out->filename, "%s", filename());
  out->continuous_dump = P.continuous;
  out->dump_period = P.period;
  out->aggregate_stats = P.aggregate;
  mxr_mutex_unlock(&P.mu);
  return 0;
}

int mxr_profiler_set_state(int state) {
  if (state != MXR_PROFILER_STOPPED && state != MXR_PROFILER_RUNNING)
    return mxr_set_error(MXR_EINVAL, "profiler: state %d is not 0 (stop) or 1 (run)", state);
  int st = ensure_init();
  if (st) return st;
  mxr_mutex_lock(&P.mu);
  if (state == MXR_PROFILER_RUNNING) {
    if (!P.exit_registered) {
      if (atexit(dump_at_exit) != 0) {
        mxr_mutex_unlock(&P.mu);
        return mxr_set_error(MXR_ENOMEM, "profiler: cannot register the dump at exit");
      }
      P.exit_registered = true;
    }
    if (!P.default_attached) {
      mxr_engine *eng = NULL;
      st = mxr_engine_default(&eng);
      if (st == 0) {
        mxr_engine_set_hooks(eng, &profiler_hooks);
        P.default_attached = eng;
      } else if (st == MXR_ESTATE) {
        st = 0; /* shut down: no op can run on it any more */
      } else {
        mxr_mutex_unlock(&P.mu);
        return st;
      }
    }
    mxr__prof_start_clock();
    P.paused = false;
    P.output_enabled = true;
  }
  P.state = state;
  publish();
  mxr_mutex_unlock(&P.mu);
  return 0;
}

int mxr_profiler_get_state(void) { return atomic_load(&g_state); }

int mxr_profiler_pause(int paused) {
  int st = ensure_init();
  if (st) return st;
  mxr_mutex_lock(&P.mu);
  P.paused = paused != 0;
  publish();
  mxr_mutex_unlock(&P.mu);
  return 0;
}

int mxr_profiler_dump(int finished) {
  int st = ensure_init();
  if (st) return st;
  mxr_mutex_lock(&P.mu);
  if (!P.output_enabled) {
    mxr_mutex_unlock(&P.mu);
    return mxr_set_error(MXR_ESTATE, "profiler: nothing to dump: the profiler has not run since "
                         "its last final dump (configure and start it first)");
  }
  if (finished) stop_timer_locked();
  st = dump_locked(finished != 0);
  if (st == 0 && (finished || !P.continuous)) P.output_enabled = false;
  unlock_and_join();
  return st;
}

int mxr_profiler_aggregate_print(int reset, char **out) {
  return mxr_profiler_aggregate_print_ex(reset, MXR_PROFILER_FORMAT_TABLE,
                                         MXR_PROFILER_SORT_TOTAL, 0, out);
}

int mxr_profiler_aggregate_print_ex(int reset, int format, int sort_by, int ascending,
                                    char **out) {
  if (!out) return mxr_set_error(MXR_EINVAL, "profiler: aggregate print: out is NULL");
  *out = NULL;
  if (format != MXR_PROFILER_FORMAT_TABLE && format != MXR_PROFILER_FORMAT_JSON)
    return mxr_set_error(MXR_EINVAL, "profiler: aggregate print: format %d is not 0 (table) or "
                         "1 (json)", format);
  if (sort_by < MXR_PROFILER_SORT_TOTAL || sort_by > MXR_PROFILER_SORT_COUNT)
    return mxr_set_error(MXR_EINVAL, "profiler: aggregate print: sort_by %d is not 0 (total), "
                         "1 (avg), 2 (min), 3 (max) or 4 (count)", sort_by);
  int st = ensure_init();
  if (st) return st;
  mxr_mutex_lock(&P.mu);
  if (P.output_enabled && dump_locked(false) == 0 && !P.continuous) P.output_enabled = false;
  bool on = P.aggregate;
  struct agg_table snap = {NULL, 0, 0};
  if (on) st = mxr__prof_aggregate_snapshot(&snap, reset != 0);
  mxr_mutex_unlock(&P.mu);
  if (st) {
    mxr__agg_clear(&snap);
    return st;
  }
  char *s = on ? mxr__agg_format(&snap, format, sort_by, ascending != 0) : strdup("");
  mxr__agg_clear(&snap);
  if (!s) return mxr_set_error(MXR_ENOMEM, "profiler: out of memory printing statistics");
  *out = s;
  return 0;
}

int mxr_profiler_is_profiling(unsigned category) {
  if (category == 0 || atomic_load(&g_state) != MXR_PROFILER_RUNNING) return 0;
  return (atomic_load(&g_mode) & category) == category;
}

int mxr_profiler_aggregate_running(void) {
  return atomic_load(&g_state) == MXR_PROFILER_RUNNING && atomic_load(&g_aggregate_on);
}

unsigned mxr_profiler_mode(void) {
  MXR_PTHREAD_CHECK(pthread_once(&init_once, init_profiler));
  return atomic_load(&g_mode);
}

/* Spans go through the recorder's op hooks: they are ops to it, recorded by
 * the running thread and nested by time inside the op that holds them. */
uint64_t mxr_profiler_span_begin(const struct mxr_op_event *ev) {
  return mxr__prof_op_begin(NULL, ev);
}

void mxr_profiler_span_end(const struct mxr_op_event *ev, uint64_t cookie) {
  mxr__prof_op_end(NULL, ev, cookie);
}

int mxr_profiler_attach_engine(mxr_engine *eng) {
  if (!eng) return mxr_set_error(MXR_EINVAL, "mxr_profiler_attach_engine: engine is NULL");
  int st = ensure_init();
  if (st) return st;
  mxr_engine_set_hooks(eng, &profiler_hooks);
  return 0;
}

int mxr_profiler_detach_engine(mxr_engine *eng) {
  if (!eng) return mxr_set_error(MXR_EINVAL, "mxr_profiler_detach_engine: engine is NULL");
  int st = ensure_init();
  if (st) return st;
  mxr_engine_set_hooks(eng, NULL);
  mxr_mutex_lock(&P.mu);
  if (P.default_attached == eng) P.default_attached = NULL;
  mxr_mutex_unlock(&P.mu);
  return 0;
}

int mxr_profiler_device_pid(struct mxr_context ctx) {
  int pid = mxr__prof_pid(ctx);
  if (pid < 0)
    mxr_set_error(MXR_EINVAL, "profiler: context (dev_type %d, dev_id %d) is outside MXNet's "
                  "device table (%d devices), so its ops are not recorded", ctx.dev_type,
                  ctx.dev_id, mxr__prof_device_count());
  return pid;
}

void mxr_profiler_reset(void) {
  if (ensure_init() != 0) return;
  mxr_mutex_lock(&P.mu);
  stop_timer_locked();
  P.state = MXR_PROFILER_STOPPED;
  P.paused = false;
  P.mode = initial_mode();
  free(P.filename);
  P.filename = NULL;
  P.continuous = false;
  P.period = 1.0;
  P.aggregate = false;
  P.output_enabled = false;
  P.session_open = false;
  P.tail_off = 0;
  publish();
  mxr__prof_recorder_reset();
  unlock_and_join();
}
