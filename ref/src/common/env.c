/*
 * The MXNET_* environment variables (mxref/config.h): one table, one parser.
 *
 * Every variable is a row of `rows` below; parsing, defaults, fallbacks,
 * error messages and the public listing are all driven by that table, so
 * adding a variable is adding a row (and its field in struct mxr_config).
 *
 * Parsing follows dmlc::GetEnv as MXNet 1.9.1 uses it, with one deliberate
 * difference: a variable that is set but empty is an error here (dmlc treats
 * it as unset), because `MXNET_X=` is far more often a broken script than an
 * intent.
 *   int   decimal, optional sign, optional surrounding whitespace, nothing
 *         else; must fit the field and lie in the row's range.
 *   bool  0, 1, true or false, case-insensitive.
 *   enum  one of the choice names, exact and case-sensitive (MXNet compares
 *         the engine and pool type strings exactly).
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/threads.h"
#include "mxref/config.h"
#include "mxref/error.h"

enum var_kind { KIND_INT, KIND_BOOL, KIND_ENUM };

struct env_row {
  struct mxr_config_var pub; /* first, so mxr_config_var_at can hand it out */
  enum var_kind kind;
  bool inherits;  /* pub.fallback names the variable whose value is the default */
  size_t offset;  /* of the field in struct mxr_config */
  size_t size;    /* of that field: int, long long or bool */
  long long min, max;            /* KIND_INT */
  const char *const *choices;    /* KIND_ENUM: index = stored value */
  size_t nchoices;
};

/* The enum choices, each listed once: the choice arrays, the accepted texts
 * and mxr_engine_type_name() are generated from these. */
#define ENGINE_TYPES(X)                     \
  X(MXR_ENGINE_NAIVE, "NaiveEngine")       \
  X(MXR_ENGINE_THREADED, "ThreadedEngine") \
  X(MXR_ENGINE_THREADED_PER_DEVICE, "ThreadedEnginePerDevice")

#define GPU_POOL_TYPES(X)           \
  X(MXR_GPU_POOL_NAIVE, "Naive")   \
  X(MXR_GPU_POOL_ROUND, "Round")   \
  X(MXR_GPU_POOL_UNPOOLED, "Unpooled")

#define CHOICE_ITEM(value, text) [value] = text,
#define CHOICE_TEXT(value, text) " " text

static const char *const engine_names[] = {ENGINE_TYPES(CHOICE_ITEM)};
static const char *const gpu_pool_names[] = {GPU_POOL_TYPES(CHOICE_ITEM)};

#define NCHOICES(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD_SIZE(f) sizeof(((struct mxr_config *)0)->f)
#define FIELD(f) offsetof(struct mxr_config, f), FIELD_SIZE(f)
/* The largest value the field can hold, for counts without an upper bound. */
#define FIELD_MAX(f) (FIELD_SIZE(f) == sizeof(int) ? (long long)INT_MAX : LLONG_MAX)

#define BOOL_ACCEPTED "0, 1, true or false (case-insensitive)"

/* Row constructors, one per kind of variable. */
#define INT_RANGE(name, f, def, lo, hi, doc) \
  {{name, "int", def, "an integer from " #lo " to " #hi, doc}, KIND_INT, false, FIELD(f), lo, hi, NULL, 0}
#define INT_AT_LEAST(name, f, def, lo, doc) \
  {{name, "int", def, "an integer >= " #lo, doc}, KIND_INT, false, FIELD(f), lo, FIELD_MAX(f), NULL, 0}
#define INT_INHERIT(name, f, from, lo, doc) \
  {{name, "int", from, "an integer >= " #lo, doc}, KIND_INT, true, FIELD(f), lo, FIELD_MAX(f), NULL, 0}
#define BOOL_VAR(name, f, def, doc) \
  {{name, "bool", def, BOOL_ACCEPTED, doc}, KIND_BOOL, false, FIELD(f), 0, 1, NULL, 0}
#define ENUM_VAR(name, f, def, list, names, doc)                                            \
  {{name, "enum", def, "one of:" list(CHOICE_TEXT) " (case-sensitive)", doc}, KIND_ENUM, false, \
   FIELD(f), 0, 0, names, NCHOICES(names)}

static const struct env_row rows[] = {
    /* engine */
    ENUM_VAR("MXNET_ENGINE_TYPE", engine_type, "ThreadedEnginePerDevice", ENGINE_TYPES,
             engine_names,
             "Which dependency engine runs operations. NaiveEngine runs each op on the "
             "thread that pushes it, one at a time, which makes failures easy to trace; "
             "ThreadedEngine shares one pool of worker threads among all devices; "
             "ThreadedEnginePerDevice gives every device its own worker pools."),
    INT_AT_LEAST("MXNET_CPU_WORKER_NTHREADS", cpu_worker_nthreads, "1", 1,
                 "Worker threads that run CPU operations (per CPU device with "
                 "ThreadedEnginePerDevice)."),
    INT_AT_LEAST("MXNET_CPU_PRIORITY_NTHREADS", cpu_priority_nthreads, "4", 1,
                 "Worker threads reserved for CPU operations pushed with a priority "
                 "above zero, so they do not queue behind ordinary work."),
    INT_AT_LEAST("MXNET_CPU_NNPACK_NTHREADS", cpu_nnpack_nthreads, "4", 1,
                 "Threads handed to NNPACK kernels. Accepted and validated; the "
                 "reference runtime has no NNPACK kernels."),
    INT_AT_LEAST("MXNET_GPU_WORKER_NTHREADS", gpu_worker_nthreads, "2", 1,
                 "Worker threads that run compute operations on each GPU. More threads "
                 "can overlap kernels but each may need its own temporary workspace."),
    INT_AT_LEAST("MXNET_GPU_COPY_NTHREADS", gpu_copy_nthreads, "1", 1,
                 "Worker threads that run memory copies to, from and on each GPU."),
    INT_RANGE("MXNET_GPU_WORKER_NSTREAMS", gpu_worker_nstreams, "1", 1, 2,
              "CUDA streams each GPU worker thread issues its kernels on."),
    /* CPU math */
    INT_AT_LEAST("MXNET_OMP_MAX_THREADS", omp_max_threads, "0", 0,
                 "Most threads one CPU operator may use: caps the OpenBLAS threads of "
                 "dot, FullyConnected and Convolution below the share of the cores they "
                 "get otherwise; 0 sets no cap. OMP_NUM_THREADS or OPENBLAS_NUM_THREADS, "
                 "when set, win over it, as OMP_NUM_THREADS does in MXNet."),
    /* executor memory */
    BOOL_VAR("MXNET_EXEC_ENABLE_INPLACE", exec_enable_inplace, "true",
             "Let the symbolic executor write an operator's output into the memory of "
             "an input that is no longer needed."),
    INT_AT_LEAST("MXNET_EXEC_MATCH_RANGE", exec_match_range, "10", 0,
                 "How loosely the executor's memory planner matches block sizes when it "
                 "reuses memory between graph nodes; 0 turns sharing off, which helps "
                 "when debugging."),
    INT_AT_LEAST("MXNET_EXEC_NUM_TEMP", exec_num_temp, "1", 1,
                 "Temporary workspaces allocated per device. Fewer saves memory at the "
                 "cost of less parallelism between operators that need workspace."),
    INT_RANGE("MXNET_GPU_MEM_POOL_RESERVE", gpu_mem_pool_reserve, "5", 0, 100,
              "Percentage of GPU memory the memory pool leaves free for other users such "
              "as kernel launches and library handles. Raise it after unexplained "
              "out-of-memory failures in kernel launches."),
    ENUM_VAR("MXNET_GPU_MEM_POOL_TYPE", gpu_mem_pool_type, "Naive", GPU_POOL_TYPES,
             gpu_pool_names,
             "How the GPU memory pool recycles freed blocks: Naive reuses blocks of "
             "exactly the same size, Round rounds sizes up so more blocks can be "
             "shared, Unpooled returns every block to the driver."),
    BOOL_VAR("MXNET_BACKWARD_DO_MIRROR", backward_do_mirror, "0",
             "Trade compute for memory in training: drop some forward results and "
             "recompute them during the backward pass."),
    /* op bulking */
    BOOL_VAR("MXNET_EXEC_BULK_EXEC_INFERENCE", exec_bulk_exec_inference, "1",
             "In inference, run the whole graph's bulkable operators as one engine "
             "operation instead of one engine operation per node."),
    BOOL_VAR("MXNET_EXEC_BULK_EXEC_TRAIN", exec_bulk_exec_train, "1",
             "In training, group consecutive bulkable operators into segments that each "
             "run as one engine operation."),
    INT_AT_LEAST("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", exec_bulk_exec_max_node_train, "15", 0,
                 "Largest number of operator nodes in one training segment; the default "
                 "for both the forward and the backward limit below."),
    INT_INHERIT("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", exec_bulk_exec_max_node_train_fwd,
                "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 0,
                "Largest number of operator nodes in one segment of the forward pass in "
                "training; unset, it takes the value of "
                "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN."),
    INT_INHERIT("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", exec_bulk_exec_max_node_train_bwd,
                "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 0,
                "Largest number of operator nodes in one segment of the backward pass; "
                "unset, it takes the value of MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN."),
    /* kvstore */
    INT_AT_LEAST("MXNET_KVSTORE_REDUCTION_NTHREADS", kvstore_reduction_nthreads, "4", 1,
                 "CPU threads that sum large arrays in the key-value store. Accepted and "
                 "validated; the reference runtime has no key-value store."),
    INT_AT_LEAST("MXNET_KVSTORE_BIGARRAY_BOUND", kvstore_bigarray_bound, "1000000", 0,
                 "Element count above which the key-value store treats an array as big "
                 "and reduces it with several threads. Accepted and validated only."),
    BOOL_VAR("MXNET_ENABLE_GPU_P2P", enable_gpu_p2p, "1",
             "Use direct GPU-to-GPU transfers, where the hardware allows them, for a "
             "device key-value store. Accepted and validated only."),
    /* profiler */
    BOOL_VAR("MXNET_PROFILER_AUTOSTART", profiler_autostart, "0",
             "Start the profiler when the library loads and write profile.json in the "
             "working directory when the process exits."),
    INT_RANGE("MXNET_PROFILER_MODE", profiler_mode, "0", 0, 255,
              "Bitmask of what an autostarted profiler records, as MXNet 1.9.1 reads it: "
              "1 symbolic, 2 imperative, 4 api, 8 memory (15 = all); 0 or unset means "
              "MXNet's default 13 (symbolic, api, memory)."),
    /* GPU math */
    /* 1 as MXNet 1.x's cuDNN convolution defaults it (older docs say 0) */
    INT_RANGE("MXNET_CUDNN_AUTOTUNE_DEFAULT", cudnn_autotune_default, "1", 0, 2,
              "Default cudnn_tune for convolutions: 0 no autotuning, 1 pick the fastest "
              "algorithm within a workspace limit, 2 pick the fastest algorithm."),
    BOOL_VAR("MXNET_CUDA_ALLOW_TENSOR_CORE", cuda_allow_tensor_core, "1",
             "Allow cuBLAS and cuDNN to use Tensor Core math where the GPU has it."),
    BOOL_VAR("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", cuda_tensor_op_math_allow_conversion, "0",
             "Let float32 matrix products and convolutions round their inputs to TF32 to "
             "use Tensor Cores (needs MXNET_CUDA_ALLOW_TENSOR_CORE too). Off: float32 "
             "math stays full FP32."),
    BOOL_VAR("MXNET_ENABLE_CUDA_GRAPHS", enable_cuda_graphs, "0",
             "Capture static GPU work into CUDA graphs and replay them to cut kernel "
             "launch overhead."),
};

#define NROWS NCHOICES(rows)

/* ---- one value ---------------------------------------------------------- */

/* errno is restored: this runs in a load-time constructor, before main. */
static bool parse_int_text(const char *s, long long *v) {
  char *end;
  int saved_errno = errno;
  errno = 0;
  *v = strtoll(s, &end, 10);
  bool overflow = errno == ERANGE;
  errno = saved_errno;
  if (end == s || overflow) return false;
  while (isspace((unsigned char)*end)) end++;
  return *end == '\0';
}

static bool parse_bool_text(const char *s, long long *v) {
  static const struct {
    const char *text;
    bool value;
  } words[] = {{"0", false}, {"1", true}, {"false", false}, {"true", true}};
  for (size_t i = 0; i < NCHOICES(words); i++) {
    if (strcasecmp(s, words[i].text) == 0) {
      *v = words[i].value;
      return true;
    }
  }
  return false;
}

static bool parse_enum_text(const struct env_row *r, const char *s, long long *v) {
  for (size_t i = 0; i < r->nchoices; i++) {
    if (r->choices[i] && strcmp(s, r->choices[i]) == 0) {
      *v = (long long)i;
      return true;
    }
  }
  return false;
}

/* Parse `s` as a value of row `r`; false if it is not accepted. */
static bool parse_value(const struct env_row *r, const char *s, long long *v) {
  switch (r->kind) {
    case KIND_INT:
      return parse_int_text(s, v) && *v >= r->min && *v <= r->max;
    case KIND_BOOL:
      return parse_bool_text(s, v);
    case KIND_ENUM:
      return parse_enum_text(r, s, v);
  }
  return false;
}

static void *field_ptr(struct mxr_config *c, const struct env_row *r) {
  return (char *)c + r->offset;
}

static void store_value(struct mxr_config *c, const struct env_row *r, long long v) {
  void *p = field_ptr(c, r);
  if (r->kind == KIND_BOOL)
    *(bool *)p = v != 0;
  else if (r->size == sizeof(long long))
    *(long long *)p = v;
  else
    *(int *)p = (int)v; /* range-checked against the field's size */
}

static const struct env_row *find_row(const char *name) {
  for (size_t i = 0; i < NROWS; i++)
    if (strcmp(rows[i].pub.name, name) == 0) return &rows[i];
  return NULL;
}

/* ---- the error message -------------------------------------------------- */

/* Long values are cut in the message so one runaway variable cannot push
 * the others out of the bounded last-error buffer. */
#define VALUE_SHOWN 64

struct invalid_list {
  char text[MXR_ERROR_MAX];
  size_t len;
  int count;
};

static void note_invalid(struct invalid_list *l, const struct env_row *r, const char *value) {
  size_t room = sizeof l->text - l->len;
  bool cut = strlen(value) > VALUE_SHOWN;
  int n = snprintf(l->text + l->len, room, "%s%s='%.*s%s' is not accepted: expected %s",
                   l->count ? "; " : "", r->pub.name, VALUE_SHOWN, value, cut ? "..." : "",
                   r->pub.accepted);
  l->count++;
  if (n > 0) l->len += (size_t)n < room ? (size_t)n : room - 1;
}

/* ---- a whole configuration ---------------------------------------------- */

static void set_defaults(struct mxr_config *c) {
  memset(c, 0, sizeof *c);
  for (size_t i = 0; i < NROWS; i++) {
    long long v;
    if (rows[i].inherits) continue; /* resolved after the variable it names */
    bool ok = parse_value(&rows[i], rows[i].pub.fallback, &v);
    assert(ok && "a default in the env table does not parse");
    (void)ok;
    store_value(c, &rows[i], v);
  }
}

/* Inheriting rows not applied from the environment (unset or invalid) take
 * the final value of the row they name, so a set
 * MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN moves both the FWD and BWD limits. */
static void apply_inherited(struct mxr_config *c, const bool *applied) {
  for (size_t i = 0; i < NROWS; i++) {
    if (!rows[i].inherits || applied[i]) continue;
    const struct env_row *from = find_row(rows[i].pub.fallback);
    assert(from && !from->inherits && from->size == rows[i].size);
    memcpy(field_ptr(c, &rows[i]), field_ptr(c, from), rows[i].size);
  }
}

int mxr_config_parse(mxr_env_lookup lookup, void *user, struct mxr_config *out) {
  struct invalid_list invalid = {.len = 0, .count = 0};
  bool applied[NROWS];
  set_defaults(out);
  for (size_t i = 0; i < NROWS; i++) {
    const char *value = lookup(user, rows[i].pub.name);
    long long v;
    applied[i] = value && parse_value(&rows[i], value, &v);
    if (applied[i])
      store_value(out, &rows[i], v);
    else if (value)
      note_invalid(&invalid, &rows[i], value);
  }
  apply_inherited(out, applied);
  if (invalid.count) return mxr_set_error(MXR_ECONFIG, "%s", invalid.text);
  return 0;
}

/* ---- the process configuration ------------------------------------------ */

static struct mxr_config process_config;
static int process_status;
/* The constructor runs on the main thread, whose last-error buffer other
 * threads cannot see, so the message is kept here and re-stored on demand. */
static char process_message[MXR_ERROR_MAX];
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static const char *getenv_lookup(void *user, const char *name) {
  (void)user;
  return getenv(name);
}

static void load_process_config(void) {
  process_status = mxr_config_parse(getenv_lookup, NULL, &process_config);
  if (process_status != 0)
    snprintf(process_message, sizeof process_message, "%s", mxr_last_error());
}

static void ensure_loaded(void) { MXR_PTHREAD_CHECK(pthread_once(&process_once, load_process_config)); }

/* Reads the environment at load, before the program can change it, so the
 * configuration is the one the process was started with.  Another
 * constructor may ask first; pthread_once makes that safe. */
__attribute__((constructor)) static void read_config_at_load(void) { ensure_loaded(); }

const struct mxr_config *mxr_config_get(void) {
  ensure_loaded();
  return &process_config;
}

int mxr_config_status(void) {
  ensure_loaded();
  if (process_status == 0) return 0;
  return mxr_set_error(MXR_ECONFIG, "%s", process_message);
}

/* ---- the table, for listings -------------------------------------------- */

size_t mxr_config_var_count(void) { return NROWS; }

const struct mxr_config_var *mxr_config_var_at(size_t i) {
  return i < NROWS ? &rows[i].pub : NULL;
}

const char *mxr_engine_type_name(int engine_type) {
  if (engine_type < 0 || (size_t)engine_type >= NCHOICES(engine_names)) return NULL;
  return engine_names[engine_type];
}
