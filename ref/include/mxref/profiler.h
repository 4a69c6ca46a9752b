/*
 * mxref/profiler.h: the profiler, an engine observer that writes a Chrome
 * trace (MXNet 1.9.1's profiler: MXSetProfilerConfig, MXSetProfilerState,
 * MXDumpProfile, MXAggregateProfileStatsPrint, MXProfilePause).
 *
 * What is recorded.  Every op an attached engine runs while the profiler is
 * running (and not paused), whose push-time category bits (struct mxr_push
 * .profile, enum mxr_profile_category) share a bit with the mode: one "B"
 * and one "E" event, cat "operator" ("Custom Operator" for names containing
 * "::"), on the pid of the op's device (MXNet's numbering, see
 * mxr_profiler_device_pid()) and the tid of the thread that began the op,
 * timestamps in microseconds since the epoch, as MXNet's.  The ops MXNet
 * never profiles ("Custom", "_backward_Custom", "CustomOperatorWait") are
 * skipped.  Starting the profiler attaches it to the library's default engine;
 * other engines are attached with mxr_profiler_attach_engine().
 *
 * The profiler is one process-wide object, safe to call from any thread.
 * The file format, the keys and autostart are described in docs/profiler.md.
 *
 * Ownership and lifetimes.
 *   - Keys, values and file names are copied during the call.
 *   - mxr_profiler_aggregate_print*() return a string the caller frees with
 *     free().
 *   - The profiler keeps what it recorded until a dump writes it out (or
 *     mxr_profiler_reset()); nothing needs freeing at exit.
 *   - An engine the profiler is attached to must be detached (or freed)
 *     by its owner; the profiler holds no reference to it.
 */
#ifndef MXREF_PROFILER_H
#define MXREF_PROFILER_H

#include <stdbool.h>

#include "mxref/base.h"
#include "mxref/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Profiler states (MXNet's ProfilerState). */
enum mxr_profiler_state {
  MXR_PROFILER_STOPPED = 0,
  MXR_PROFILER_RUNNING = 1,
};

/* mxr_profiler_aggregate_print_ex() formats and sort keys, with MXNet's
 * numbering (MXAggregateProfileStatsPrintEx). */
enum mxr_profiler_format {
  MXR_PROFILER_FORMAT_TABLE = 0,
  MXR_PROFILER_FORMAT_JSON = 1,
};

enum mxr_profiler_sort {
  MXR_PROFILER_SORT_TOTAL = 0,
  MXR_PROFILER_SORT_AVG = 1,
  MXR_PROFILER_SORT_MIN = 2,
  MXR_PROFILER_SORT_MAX = 3,
  MXR_PROFILER_SORT_COUNT = 4,
};

/* All mode bits (profile_all). */
#define MXR_PROFILE_ALL                                                       \
  (MXR_PROFILE_SYMBOLIC | MXR_PROFILE_IMPERATIVE | MXR_PROFILE_API |          \
   MXR_PROFILE_MEMORY)

/*
 * Configure (MXSetProfilerConfig).  Like MXNet, every call starts from the
 * defaults and applies the given pairs in order (a repeated key: the last
 * wins).  Keys and defaults:
 *   profile_all        False  all mode bits
 *   profile_symbolic   True   MXR_PROFILE_SYMBOLIC
 *   profile_imperative True   MXR_PROFILE_IMPERATIVE
 *   profile_memory     True   MXR_PROFILE_MEMORY
 *   profile_api        True   MXR_PROFILE_API
 *   filename           "profile.json" (relative to the working directory at
 *                      dump time); the file is removed by this call
 *   continuous_dump    True   dumps append to one file, and a timer dumps
 *                             every dump_period seconds
 *   dump_period        1.0    seconds, > 0 when continuous_dump is set
 *   aggregate_stats    False  keep per-name statistics; False drops them
 *   profile_process    "worker" ("server" needs a distributed kvstore and
 *                             is refused)
 * Booleans accept true/false in any case, 1 and 0; dump_period a float.
 * An unknown key, an unparsable value or a NULL key/value fails with
 * MXR_EINVAL naming the key and value, and changes nothing.  MXR_ESYS when
 * the dump timer thread cannot start.  Allowed in any state.
 */
int mxr_profiler_set_config(int num_params, const char *const *keys, const char *const *vals);

/* Run (MXR_PROFILER_RUNNING) or stop (MXNet's MXSetProfilerState).  Running
 * also un-pauses, enables output (dumps) and, the first time, attaches the
 * profiler to the default engine (mxr_engine_default()); that fails with the
 * engine's error (e.g. an invalid configuration), leaving the state as it
 * was.  A process that started the profiler writes the trace at exit, as
 * mxr_profiler_dump(1) would, unless a final dump came after the last start.
 * MXR_EINVAL for another state value. */
int mxr_profiler_set_state(int state);

/* The state: MXR_PROFILER_STOPPED or MXR_PROFILER_RUNNING. */
int mxr_profiler_get_state(void);

/* Pause (nonzero) or resume (0) recording without changing the state
 * (MXProfilePause).  Running un-pauses. */
int mxr_profiler_pause(int paused);

/*
 * Write what was recorded since the last dump (MXDumpProfile).  The file is
 * always a complete JSON document after the call.  With continuous_dump the
 * first dump writes the file and later ones append to it (the closing is
 * rewritten), until a dump with `finished` nonzero; that one also stops the
 * dump timer.  Without continuous_dump every dump rewrites the file with the
 * events recorded since the previous dump.  After a finished dump, or any
 * dump without continuous_dump, dumps are refused (MXR_ESTATE, as MXNet's
 * "Profiler hasn't been run") until the profiler runs again; the next dump
 * then starts a new file.  MXR_ESYS when the file cannot be written, with
 * its name and the reason; nothing recorded is lost when it cannot be opened.
 * Safe while ops run.
 */
int mxr_profiler_dump(int finished);

/*
 * The aggregate statistics, printed (MXAggregateProfileStatsPrint(Ex)):
 * per category ("operator"), per op name, the count and the total, min, max
 * and average time in ms, in MXNet's table layout (format TABLE) or its JSON
 * layout (format JSON), sorted by `sort_by` descending (ascending if
 * nonzero).  mxr_profiler_aggregate_print() is TABLE sorted by total,
 * descending.  "" when aggregate_stats is off.  With `reset`, the statistics
 * are cleared after printing.  Like MXNet, this first dumps the trace
 * (mxr_profiler_dump(0)) when output is enabled; a failure of that dump is
 * ignored.  *out is a malloc'd string the caller frees with free().
 * MXR_EINVAL for a NULL out or a bad format/sort_by; MXR_ENOMEM.
 */
int mxr_profiler_aggregate_print(int reset, char **out);
int mxr_profiler_aggregate_print_ex(int reset, int format, int sort_by, int ascending,
                                    char **out);

/* For pushers (MXNet's Profiler::IsProfiling): nonzero when the profiler is
 * running and every bit of `category` is in the mode.  0 for category 0. */
int mxr_profiler_is_profiling(unsigned category);

/* Nonzero while running with aggregate_stats on (MXNet's AggregateRunning:
 * the engine and executor disable bulking then). */
int mxr_profiler_aggregate_running(void);

/* The current mode bits (enum mxr_profile_category). */
unsigned mxr_profiler_mode(void);

/*
 * Spans: work inside a running engine op that the trace shows as an event of
 * its own, nested in the op's (category "cuda_graph" for names starting with
 * MXR_PROFILER_CUDA_GRAPH_PREFIX, else "operator").  begin returns a cookie
 * that end takes, both called on the thread running the op; the span is
 * recorded when the profiler records ops of `ev->profile` on `ev->ctx`, under
 * the name `ev` carries at end (so a caller may name the span after what it
 * turned out to be).  A cookie of 0 records nothing.
 */
uint64_t mxr_profiler_span_begin(const struct mxr_op_event *ev);
void mxr_profiler_span_end(const struct mxr_op_event *ev, uint64_t cookie);

/* The spans of a bulked segment run as a CUDA graph (MXNET_ENABLE_CUDA_GRAPHS):
 * "CudaGraphCapture" when the run recorded the segment's kernels into a graph
 * (and launched it), "CudaGraphLaunch" when it replayed a graph captured
 * earlier.  A segment run plainly has neither (docs/profiler.md). */
#define MXR_PROFILER_CUDA_GRAPH_PREFIX "CudaGraph"
#define MXR_PROFILER_CUDA_GRAPH_CAPTURE "CudaGraphCapture"
#define MXR_PROFILER_CUDA_GRAPH_LAUNCH "CudaGraphLaunch"

/* Install the profiler's hooks on `eng` (replacing any other hooks), or
 * remove them.  Same rule as mxr_engine_set_hooks(): call while no op runs on
 * that engine.  Attaching twice is harmless.  MXR_EINVAL for NULL. */
int mxr_profiler_attach_engine(mxr_engine *eng);
int mxr_profiler_detach_engine(mxr_engine *eng);

/* The trace pid of a context, MXNet's device index: cpu(i) -> i for i below
 * the number of processors P the process may use; gpu(i) -> P + i (i < 32,
 * CUDA builds only); cpu_pinned -> P + G, cpu_shared -> P + G + 1 (G = 32
 * in a CUDA build, else 0).  -1 (MXR_EINVAL set) for a context outside that
 * table; ops on such contexts are not recorded. */
int mxr_profiler_device_pid(struct mxr_context ctx);

/* The configuration in effect. */
struct mxr_profiler_config {
  unsigned mode;         /* enum mxr_profile_category bits */
  char filename[4096];
  bool continuous_dump;
  double dump_period;
  bool aggregate_stats;
};
int mxr_profiler_get_config(struct mxr_profiler_config *out);

/* Back to the state at load, for tests: stopped, default configuration,
 * output disabled, timer stopped, records and statistics dropped.  Engines
 * stay attached.  Call while no profiled op runs. */
void mxr_profiler_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_PROFILER_H */
