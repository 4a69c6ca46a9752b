/*
 * harness/probe/probe.h: what mxcts-probe offers its tests: reading a
 * profiler trace (Chrome trace JSON) into the structure of one
 * pass: how many engine ops ran and how many ops each bulk segment held.
 *
 * Names tell the kinds apart, as MXNet 1.9.1 writes them:
 *   "[op1,op2,...]"  an executor segment
 *   "op1,op2,..."    a cached-op segment (a comma, no brackets)
 *   "ImperativeBulk" an engine bulk of imperative ops (size not in the name)
 *   anything else    a single op
 * Events of category "cuda_graph" are not ops but spans inside a segment's
 * event: libmxref's CUDA graph captures and launches (mxref/profiler.h).
 * MXNet cuts names to 127 bytes in its trace; a segment name cut short (an
 * executor segment without its closing bracket, a cached-op segment of
 * exactly 127 bytes) has an unknown size, reported as -1.  The probe's own synchronisation ops (WaitForVar, WaitForAll,
 * DeleteVariable, MXNet's SetupExec) and copies of head gradients (CopyCPU2CPU) are counted
 * apart and not as engine ops of the pass.
 */
#ifndef MXCTS_PROBE_H
#define MXCTS_PROBE_H

#include <stddef.h>

struct mxcts_pass_structure {
  int engine_ops;      /* op events of the pass */
  int segments;        /* events that are segments (either kind) */
  int bulks;           /* ImperativeBulk events */
  int helper_ops;      /* synchronisation and copy events, not counted above */
  int graph_launches;  /* CUDA graph spans (category "cuda_graph"): segment
                          runs that launched a graph instead of their kernels;
                          not engine ops */
  int graph_captures;  /* those of them that captured the graph first
                          ("CudaGraphCapture") */
  int *segment_sizes;  /* per engine op in order: ops it held (1 for a single
                          op, -1 unknown); malloc'd, caller frees */
  char **names;        /* per engine op, malloc'd strings; caller frees */
  int num_names;
};

/* Parse the trace at `path`.  Returns 0, or -1 with a message in err
 * (naming the file and what is wrong). */
int mxcts_trace_read(const char *path, struct mxcts_pass_structure *out, char *err, size_t errlen);

/* The name prefix of the probe's pass markers: an op named
 * "mxcts-pass:<pass>" ends <pass> in a trace holding several passes. */
#define MXCTS_PASS_MARKER "mxcts-pass:"

/* Parse a trace holding `n` passes, each ended by its marker op, in order:
 * out[i] gets the ops between marker i-1 and marker i (markers not
 * counted).  Fails when a marker is missing. */
int mxcts_trace_read_passes(const char *path, struct mxcts_pass_structure *out, int n, char *err,
                            size_t errlen);

void mxcts_trace_free(struct mxcts_pass_structure *s);

/* What a trace shows of the Chrome trace format and its clock.  Every
 * event needs a string `name` and a one-letter `ph`; metadata events
 * ("M", which MXNet writes without ts and tid) a number `pid`; every other
 * event numbers `ts`, `pid` and `tid`, and a complete event ("X") a
 * number `dur` >= 0.  Timestamps and durations are microseconds. */
struct mxcts_trace_format {
  int events;              /* traceEvents entries */
  int malformed;           /* entries breaking the rules above */
  char first_malformed[256]; /* what the first of them lacks */
  int timed;               /* entries with a ts (all but metadata) */
  double min_ts, max_ts;   /* over them */
  int op_pairs;            /* complete events of the op asked for: B/E pairs and X */
  double op_dur;           /* the duration of its first one, -1 when none */
  int op_threads;          /* distinct (pid, tid) of the B and X events whose
                              name is one of the names asked for */
};

/* Check the trace at `path` against the format; `op` names the op whose
 * duration is wanted (NULL: none), `thread_ops` a NULL-terminated list
 * whose threads are counted (NULL: none).  Returns 0, or -1 with a message
 * in err when the file is not a JSON object with a traceEvents array. */
int mxcts_trace_read_format(const char *path, const char *op, const char *const *thread_ops,
                            struct mxcts_trace_format *out, char *err, size_t errlen);

#endif /* MXCTS_PROBE_H */
