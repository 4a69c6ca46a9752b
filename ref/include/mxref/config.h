/*
 * mxref/config.h: every MXNET_* environment variable the runtime honours.
 *
 * The process configuration is read once, when the library is loaded, from
 * the environment the process was started with; changing the environment
 * afterwards has no effect (as in MXNet, whose engine and executor read their
 * variables once).  Each variable is validated: a value that does not parse
 * makes mxr_config_status() fail with a message naming the variable, the
 * value and what is accepted, and every entry point that needs the
 * configuration (e.g. mxr_engine_default()) fails the same way.
 *
 * The variables, their defaults and documentation live in one table
 * (ref/src/common/env.c); mxr_config_var_count()/mxr_config_var_at() expose
 * it so that tools and docs can list it.
 */
#ifndef MXREF_CONFIG_H
#define MXREF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mxr_engine_type {
  MXR_ENGINE_NAIVE = 0,             /* "NaiveEngine" */
  MXR_ENGINE_THREADED = 1,          /* "ThreadedEngine" (pooled) */
  MXR_ENGINE_THREADED_PER_DEVICE = 2, /* "ThreadedEnginePerDevice" */
};

enum mxr_gpu_mem_pool_type {
  MXR_GPU_POOL_NAIVE = 0,    /* "Naive" */
  MXR_GPU_POOL_ROUND = 1,    /* "Round" */
  MXR_GPU_POOL_UNPOOLED = 2, /* "Unpooled" */
};

/* The parsed configuration.  Field names follow the variable names. */
struct mxr_config {
  /* engine */
  int engine_type;               /* MXNET_ENGINE_TYPE, enum mxr_engine_type */
  int cpu_worker_nthreads;       /* MXNET_CPU_WORKER_NTHREADS */
  int cpu_priority_nthreads;     /* MXNET_CPU_PRIORITY_NTHREADS */
  int cpu_nnpack_nthreads;       /* MXNET_CPU_NNPACK_NTHREADS */
  int gpu_worker_nthreads;       /* MXNET_GPU_WORKER_NTHREADS */
  int gpu_copy_nthreads;         /* MXNET_GPU_COPY_NTHREADS */
  int gpu_worker_nstreams;       /* MXNET_GPU_WORKER_NSTREAMS */
  /* CPU math */
  int omp_max_threads;           /* MXNET_OMP_MAX_THREADS: most threads of a CPU op, 0 no cap */
  /* executor memory */
  bool exec_enable_inplace;      /* MXNET_EXEC_ENABLE_INPLACE */
  int exec_match_range;          /* MXNET_EXEC_MATCH_RANGE */
  int exec_num_temp;             /* MXNET_EXEC_NUM_TEMP */
  int gpu_mem_pool_reserve;      /* MXNET_GPU_MEM_POOL_RESERVE (percent) */
  int gpu_mem_pool_type;         /* MXNET_GPU_MEM_POOL_TYPE, enum mxr_gpu_mem_pool_type */
  bool backward_do_mirror;       /* MXNET_BACKWARD_DO_MIRROR */
  /* op bulking */
  bool exec_bulk_exec_inference; /* MXNET_EXEC_BULK_EXEC_INFERENCE */
  bool exec_bulk_exec_train;     /* MXNET_EXEC_BULK_EXEC_TRAIN */
  int exec_bulk_exec_max_node_train;     /* MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN */
  int exec_bulk_exec_max_node_train_fwd; /* ..._FWD, default: ..._MAX_NODE_TRAIN */
  int exec_bulk_exec_max_node_train_bwd; /* ..._BWD, default: ..._MAX_NODE_TRAIN */
  /* kvstore (accepted and validated; no kvstore in the reference yet) */
  int kvstore_reduction_nthreads; /* MXNET_KVSTORE_REDUCTION_NTHREADS */
  long long kvstore_bigarray_bound; /* MXNET_KVSTORE_BIGARRAY_BOUND */
  bool enable_gpu_p2p;           /* MXNET_ENABLE_GPU_P2P */
  /* profiler */
  bool profiler_autostart;       /* MXNET_PROFILER_AUTOSTART */
  int profiler_mode;             /* MXNET_PROFILER_MODE (bitmask) */
  /* GPU math */
  int cudnn_autotune_default;    /* MXNET_CUDNN_AUTOTUNE_DEFAULT: 0 off, 1 limited, 2 fastest */
  bool cuda_allow_tensor_core;   /* MXNET_CUDA_ALLOW_TENSOR_CORE */
  bool cuda_tensor_op_math_allow_conversion; /* MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION */
  bool enable_cuda_graphs;       /* MXNET_ENABLE_CUDA_GRAPHS */
};

/* One row of the variable table.  All strings are static. */
struct mxr_config_var {
  const char *name;      /* "MXNET_ENGINE_TYPE" */
  const char *kind;      /* "int", "bool", "enum" */
  const char *fallback;  /* the default, as text ("15", "ThreadedEnginePerDevice",
                            or the name of the variable whose value it takes) */
  const char *accepted;  /* what values parse, in words */
  const char *doc;       /* one-paragraph documentation */
};

/* Looks up a variable's value by name; returns NULL when it is unset.
 * `user` is passed through unchanged. */
typedef const char *(*mxr_env_lookup)(void *user, const char *name);

/* Parse a configuration from `lookup` (getenv-like) into `*out`.  Unset
 * variables take their defaults.  Returns 0, or MXR_ECONFIG with a last-error
 * message listing every invalid variable as NAME='value' and what is accepted;
 * `*out` then holds the defaults for the invalid fields.  Pure: it touches no
 * global state besides the last-error message. */
int mxr_config_parse(mxr_env_lookup lookup, void *user, struct mxr_config *out);

/* The process configuration read at library load.  Never NULL; points at
 * static storage valid for the life of the process. */
const struct mxr_config *mxr_config_get(void);

/* 0 if the process configuration was valid, else MXR_ECONFIG with the message
 * (re)stored as this thread's last error. */
int mxr_config_status(void);

/* The variable table, for listings and docs. */
size_t mxr_config_var_count(void);
const struct mxr_config_var *mxr_config_var_at(size_t i); /* NULL if i is out of range */

/* The name of an engine type ("NaiveEngine"), or NULL if unknown. */
const char *mxr_engine_type_name(int engine_type);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_CONFIG_H */
