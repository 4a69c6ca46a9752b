/*
 * What it costs to hand one word from one core to another: what the
 * engine's unbulked dispatch pays where the pushing thread and the worker
 * run on different cores and wait for each other.
 *
 *   atomic  two threads take turns incrementing one atomic counter, each
 *           spinning until the other has moved it: one hand-over is one
 *           cache line moving between the cores
 *   mutex   the same turn-taking with the counter under a pthread mutex,
 *           as a locked queue hands an op over
 *
 * Each figure is nanoseconds per one-way hand-over, the median of --reps
 * runs of 200,000 turns.  The threads are pinned to the first two CPUs the
 * process may use; with only one CPU there is nothing to measure and the
 * program says so.  This is a latency: a thread that waits for what the
 * other core just wrote (a worker for the next op, a waiter for a
 * completion) pays it.  Threads that do not wait for each other overlap
 * several transfers, so a pipelined stream of ops can cost less per op.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "common/threads.h" /* mxr__cpu_relax only: the rest is libmxref's own */

enum { TURNS = 200000, MAX_REPS = 31 };

struct game {
  bool locked;                 /* the counter is guarded by mu */
  int cpu[2];                  /* where each player runs */
  _Alignas(64) atomic_long turn;
  _Alignas(64) pthread_mutex_t mu;
  long turn_locked;
};

struct player {
  struct game *g;
  int me; /* 0 or 1: moves the counter from even or odd values */
};

/* A pthread call that must succeed. */
static void check(int rc, const char *call) {
  if (rc == 0) return;
  fprintf(stderr, "%s: %s: %s\n", bench_prog, call, strerror(rc));
  exit(2);
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  check(pthread_setaffinity_np(pthread_self(), sizeof set, &set), "pthread_setaffinity_np");
}

static long read_turn(struct game *g) {
  if (!g->locked) return atomic_load_explicit(&g->turn, memory_order_acquire);
  check(pthread_mutex_lock(&g->mu), "pthread_mutex_lock");
  long t = g->turn_locked;
  check(pthread_mutex_unlock(&g->mu), "pthread_mutex_unlock");
  return t;
}

static void take_turn(struct game *g) {
  if (!g->locked) {
    atomic_fetch_add_explicit(&g->turn, 1, memory_order_acq_rel);
    return;
  }
  check(pthread_mutex_lock(&g->mu), "pthread_mutex_lock");
  g->turn_locked++;
  check(pthread_mutex_unlock(&g->mu), "pthread_mutex_unlock");
}

static void *play(void *arg) {
  struct player *p = arg;
  pin(p->g->cpu[p->me]);
  for (long t = p->me; t < 2L * TURNS; t += 2) {
    while (read_turn(p->g) != t) mxr__cpu_relax();
    take_turn(p->g);
  }
  return NULL;
}

/* One run: ns per one-way hand-over. */
static double run_once(bool locked, const int cpu[2]) {
  struct game g = {.locked = locked, .cpu = {cpu[0], cpu[1]}, .turn_locked = 0};
  atomic_init(&g.turn, 0);
  check(pthread_mutex_init(&g.mu, NULL), "pthread_mutex_init");
  struct player other = {&g, 1}, self = {&g, 0};
  pthread_t th;
  check(pthread_create(&th, NULL, play, &other), "pthread_create");
  double t0 = bench_now_s();
  play(&self);
  check(pthread_join(th, NULL), "pthread_join");
  double t1 = bench_now_s();
  check(pthread_mutex_destroy(&g.mu), "pthread_mutex_destroy");
  return (t1 - t0) * 1e9 / (2.0 * TURNS);
}

static double median_run(bool locked, const int cpu[2], int reps) {
  double t[MAX_REPS];
  for (int r = 0; r < reps; r++) t[r] = run_once(locked, cpu);
  return bench_median(t, reps);
}

/* The first two CPUs this process may run on; false if it has only one. */
static bool two_cpus(int cpu[2]) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
    if (CPU_ISSET(c, &set)) cpu[found++] = c;
  return found == 2;
}

int main(int argc, char **argv) {
  bench_prog = "handoff_bench";
  int reps = 7;
  bool check = false; /* no targets: the figures are the machine's */
  int st = bench_parse_args(argc, argv, MAX_REPS, &reps, &check);
  if (st >= 0) return st;
  int cpu[2];
  if (!two_cpus(cpu)) {
    printf("handoff_bench: this process may use one CPU only; no hand-over to measure\n");
    return 0;
  }
  double atomic_ns = median_run(false, cpu, reps);
  double mutex_ns = median_run(true, cpu, reps);
  printf("core-to-core hand-over, CPUs %d and %d, median of %d runs of %d turns:\n", cpu[0], cpu[1],
         reps, TURNS);
  printf("  atomic  %7.1f ns\n", atomic_ns);
  printf("  mutex   %7.1f ns\n", mutex_ns);
  return 0;
}
