/* Thread placement for timed workloads (--param pin=split).
 *
 * What engine bulking saves is mostly the cost of handing each op from the
 * pushing thread to an engine worker.  When the OS runs both on one core
 * (it may, even on an idle machine) that hand-over costs next to nothing,
 * and a bulked run is no faster: the measurement then says more about the
 * scheduler than about the engine.  pin=split takes that choice away: the
 * pushing thread runs on one idle CPU and every other thread of the process
 * on the other idle CPUs.  Workloads call mxcts__probe_pin_threads() before each
 * timed iteration, so that threads the implementation started since are
 * placed too.
 *
 * Only idle CPUs are used: pinning a worker onto a core that another
 * process keeps busy would hide that process from the contention figure
 * (it would get half the core and read as half a core of contention) while
 * slowing the worker.  So with fewer than two idle CPUs nothing is pinned,
 * the OS places the threads as usual, and the result says why.  Linux only;
 * elsewhere the result says pinning was not applied. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "probe/probe_internal.h"

/* A CPU counts as idle when other work used less than this share of it
 * while the probe slept for IDLE_SAMPLE_NS. */
#define IDLE_MAX_BUSY 0.5
#define IDLE_SAMPLE_NS 50000000L

struct pin_state {
  bool started;
  bool usable;          /* at least two idle CPUs allowed */
  const char *why;      /* when not usable */
  cpu_set_t idle;       /* the allowed CPUs found idle */
  int pusher_cpu;
  int pinned_max;       /* most other threads pinned by one call */
  int failures;         /* sched_setaffinity errors other than ESRCH */
  int last_errno;
};

static struct pin_state pin;

/* Busy and total clock ticks of each CPU so far, from /proc/stat's cpuN
 * lines; false if it cannot be read. */
static bool cpu_ticks(unsigned long long *busy, unsigned long long *total, int ncpu) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return false;
  memset(busy, 0, (size_t)ncpu * sizeof *busy);
  memset(total, 0, (size_t)ncpu * sizeof *total);
  char line[512];
  while (fgets(line, sizeof line, f)) {
    int cpu;
    unsigned long long v[8] = {0};
    if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
               &v[3], &v[4], &v[5], &v[6], &v[7]) < 5 || cpu < 0 || cpu >= ncpu)
      continue;
    busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* all but idle and iowait */
    total[cpu] = busy[cpu] + v[3] + v[4];
  }
  fclose(f);
  return true;
}

/* The allowed CPUs that other work left (mostly) idle while the probe
 * slept; all allowed ones when /proc/stat cannot be read.  The process'
 * own threads may be busy meanwhile (an idle BLAS pool spinning after
 * load, a worker polling), and /proc/stat cannot tell whose ticks it
 * counts: so the process' own CPU time is taken off the total first, and
 * only as many CPUs as the rest fills (rounded) are marked busy, the
 * busiest first. */
static void find_idle_cpus(const cpu_set_t *allowed, cpu_set_t *idle) {
  enum { N = CPU_SETSIZE };
  static unsigned long long b0[N], t0[N], b1[N], t1[N];
  static double busy[N];
  *idle = *allowed;
  double own0 = mxcts__probe_own_cpu_s();
  if (!cpu_ticks(b0, t0, N)) return;
  struct timespec nap = {0, IDLE_SAMPLE_NS};
  nanosleep(&nap, NULL);
  if (!cpu_ticks(b1, t1, N)) return;
  double own_cores = (mxcts__probe_own_cpu_s() - own0) / (IDLE_SAMPLE_NS * 1e-9), total = 0;
  for (int c = 0; c < N; c++) {
    unsigned long long dt = t1[c] - t0[c];
    busy[c] = CPU_ISSET(c, allowed) && dt > 0 ? (double)(b1[c] - b0[c]) / (double)dt : 0;
    total += busy[c];
  }
  /* e.g. one CPU hogged and our threads idle: total 1, own 0: one busy */
  int others = (int)(total - own_cores + 1 - IDLE_MAX_BUSY);
  for (int k = 0; k < others; k++) {
    int top = -1;
    for (int c = 0; c < N; c++)
      if (CPU_ISSET(c, idle) && busy[c] > IDLE_MAX_BUSY && (top < 0 || busy[c] > busy[top])) top = c;
    if (top < 0) break;
    CPU_CLR(top, idle);
  }
}

static void pin_start(void) {
  pin.started = true;
  pin.pusher_cpu = -1;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    pin.why = "sched_getaffinity failed";
    return;
  }
  if (CPU_COUNT(&allowed) < 2) {
    pin.why = "fewer than two CPUs allowed";
    return;
  }
  find_idle_cpus(&allowed, &pin.idle);
  if (CPU_COUNT(&pin.idle) < 2) {
    pin.why = "fewer than two idle CPUs (other work keeps the rest busy)";
    return;
  }
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &pin.idle)) {
      pin.pusher_cpu = c;
      break;
    }
  pin.usable = true;
}

static void pin_record(struct probe *p) {
  json_t *o = json_pack("{s:s, s:b}", "mode", "split", "applied", pin.usable && pin.failures == 0);
  if (!pin.usable) {
    json_object_set_new(o, "why", json_string(pin.why));
  } else {
    json_object_set_new(o, "pusher_cpu", json_integer(pin.pusher_cpu));
    json_object_set_new(o, "idle_cpus", json_integer(CPU_COUNT(&pin.idle)));
    json_object_set_new(o, "threads_pinned", json_integer(pin.pinned_max));
    if (pin.failures)
      json_object_set_new(o, "why", json_sprintf("sched_setaffinity failed %d times: %s",
                                                  pin.failures, strerror(pin.last_errno)));
  }
  json_object_set_new(p->result, "pinning", o);
}

static void set_affinity(pid_t tid, const cpu_set_t *set) {
  if (syscall(SYS_sched_setaffinity, tid, sizeof *set, set) == 0) return;
  if (errno == ESRCH) return; /* the thread ended meanwhile */
  pin.failures++;
  pin.last_errno = errno;
}

/* Pin every thread of the process but the caller to `others`; returns how
 * many. */
static int pin_other_threads(pid_t self, const cpu_set_t *others) {
  DIR *d = opendir("/proc/self/task");
  if (!d) {
    pin.failures++;
    pin.last_errno = errno;
    return 0;
  }
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long tid = strtol(e->d_name, &end, 10);
    if (*end || tid <= 0 || tid == self) continue;
    set_affinity((pid_t)tid, others);
    n++;
  }
  closedir(d);
  return n;
}

void mxcts__probe_pin_threads(struct probe *p) {
  if (strcmp(mxcts__probe_param_str(p, "pin", "none"), "split") != 0) return;
  if (!pin.started) pin_start();
  if (pin.usable) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    cpu_set_t mine, others = pin.idle;
    CPU_ZERO(&mine);
    CPU_SET(pin.pusher_cpu, &mine);
    CPU_CLR(pin.pusher_cpu, &others);
    set_affinity(self, &mine);
    int n = pin_other_threads(self, &others);
    if (n > pin.pinned_max) pin.pinned_max = n;
  }
  pin_record(p);
}
