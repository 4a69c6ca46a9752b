/* Thread placement for timed workloads (--param pin=split).
 *
 * What engine bulking saves is mostly the cost of handing each op from the
 * pushing thread to an engine worker.  When the OS runs both on one core
 * (it may, even on an idle machine, and must when a core is busy) that
 * hand-over costs next to nothing, and a bulked run is no faster: the
 * measurement then says more about the scheduler than about the engine.
 * pin=split takes that choice away: the pushing thread runs on the first
 * CPU this process may use and every other thread of the process on the
 * rest.  Workloads call probe_pin_threads() before each timed iteration, so
 * that threads the implementation started since are placed too.  Linux
 * only; elsewhere, or with one CPU, the result says pinning was not applied. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

struct pin_state {
  bool started;
  bool usable;          /* at least two CPUs allowed */
  cpu_set_t allowed;    /* the process' mask before any pinning */
  int pusher_cpu;
  int pinned_max;       /* most other threads pinned by one call */
  int failures;         /* sched_setaffinity errors other than ESRCH */
  int last_errno;
};

static struct pin_state pin;

static void pin_start(void) {
  pin.started = true;
  pin.pusher_cpu = -1;
  if (sched_getaffinity(0, sizeof pin.allowed, &pin.allowed) != 0) return;
  if (CPU_COUNT(&pin.allowed) < 2) return;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &pin.allowed)) {
      pin.pusher_cpu = c;
      break;
    }
  pin.usable = true;
}

static void pin_record(struct probe *p) {
  json_t *o = json_pack("{s:s, s:b}", "mode", "split", "applied", pin.usable && pin.failures == 0);
  if (!pin.usable) {
    json_object_set_new(o, "why", json_string("fewer than two CPUs allowed"));
  } else {
    json_object_set_new(o, "pusher_cpu", json_integer(pin.pusher_cpu));
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

void probe_pin_threads(struct probe *p) {
  if (strcmp(probe_param_str(p, "pin", "none"), "split") != 0) return;
  if (!pin.started) pin_start();
  if (pin.usable) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    cpu_set_t mine, others = pin.allowed;
    CPU_ZERO(&mine);
    CPU_SET(pin.pusher_cpu, &mine);
    CPU_CLR(pin.pusher_cpu, &others);
    set_affinity(self, &mine);
    int n = pin_other_threads(self, &others);
    if (n > pin.pinned_max) pin.pinned_max = n;
  }
  pin_record(p);
}
