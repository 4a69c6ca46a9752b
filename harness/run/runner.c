/* Starting probe processes and recording how they ended (run/run.h). */
#include "run/run_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "common/jsonv.h"

/* --- outcomes ------------------------------------------------------------------ */

static const char *exit_name(enum mxcts_exit e) {
  switch (e) {
  case MXCTS_EXIT_CODE: return "code";
  case MXCTS_EXIT_SIGNAL: return "signal";
  case MXCTS_EXIT_TIMEOUT: return "timeout";
  case MXCTS_EXIT_SPAWN: return "spawn";
  case MXCTS_EXIT_SKIPPED: return "skipped";
  }
  return "?";
}

const char *mxcts_signal_name(int sig) {
  static const struct { int sig; const char *name; } names[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
      {SIGQUIT, "SIGQUIT"}, {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},
      {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
  static _Thread_local char buf[32];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].sig == sig) return names[i].name;
  snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

void mxcts_outcome_free(struct mxcts_outcome *o) {
  free(o->detail);
  o->detail = NULL;
}

static int outcome_save(const char *dir, const struct mxcts_outcome *o) {
  bool by_signal = o->how == MXCTS_EXIT_SIGNAL ||
                   (o->how == MXCTS_EXIT_SKIPPED && o->cause == MXCTS_EXIT_SIGNAL);
  json_t *doc = json_pack("{s:s, s:i, s:i, s:s, s:f, s:f, s:s?}", "exit", exit_name(o->how),
                          "code", o->code, "signal", o->signal, "signal_name",
                          by_signal ? mxcts_signal_name(o->signal) : "", "wall_s", o->wall_s,
                          "timeout_s", o->timeout_s, "detail", o->detail);
  if (o->how == MXCTS_EXIT_SKIPPED)
    json_object_set_new(doc, "cause", json_string(exit_name(o->cause)));
  if (o->after_result) json_object_set_new(doc, "after_result", json_true());
  char *path = mxcts_xasprintf("%s/outcome.json", dir);
  int rc = mxcts_json_save(path, doc);
  free(path);
  json_decref(doc);
  return rc;
}

static int exit_by_name(const char *name) {
  for (int e = MXCTS_EXIT_CODE; e <= MXCTS_EXIT_SKIPPED; e++)
    if (!strcmp(name, exit_name((enum mxcts_exit)e))) return e;
  return -1;
}

/* A skipped process names what its group's failed process did. */
static int load_cause(const struct mxcts_jloc *at, json_t *doc, struct mxcts_outcome *o) {
  char *cause = NULL;
  int rc = mxcts_jget_string(at, doc, "cause", true, &cause);
  int which = rc ? 0 : exit_by_name(cause);
  if (!rc && which != MXCTS_EXIT_SIGNAL && which != MXCTS_EXIT_TIMEOUT)
    rc = mxcts_jfail_key(at, "cause", "\"%s\" is not \"signal\" or \"timeout\"", cause);
  o->cause = rc ? MXCTS_EXIT_CODE : (enum mxcts_exit)which;
  free(cause);
  return rc;
}

int mxcts_outcome_load(const char *dir, struct mxcts_outcome *o) {
  char *path = mxcts_xasprintf("%s/outcome.json", dir);
  json_t *doc = NULL;
  char *how = NULL;
  long code = 0, sig = 0;
  memset(o, 0, sizeof *o);
  int rc = mxcts_json_load(path, &doc);
  struct mxcts_jloc at = {path, ""};
  if (!rc && !json_is_object(doc)) rc = mxcts_jfail(&at, "expected an object");
  if (!rc) rc = mxcts_jget_string(&at, doc, "exit", true, &how);
  if (!rc) rc = mxcts_jget_long(&at, doc, "code", false, -1000, 1000, &code);
  if (!rc) rc = mxcts_jget_long(&at, doc, "signal", false, 0, 1000, &sig);
  if (!rc) rc = mxcts_jget_double(&at, doc, "wall_s", false, 0, 1e9, &o->wall_s);
  if (!rc) rc = mxcts_jget_double(&at, doc, "timeout_s", false, 0, 1e9, &o->timeout_s);
  if (!rc && !json_is_null(json_object_get(doc, "detail")))
    rc = mxcts_jget_string(&at, doc, "detail", false, &o->detail);
  int which = rc ? 0 : exit_by_name(how);
  if (which < 0) rc = mxcts_jfail_key(&at, "exit", "\"%s\" is not a known exit", how);
  o->how = (enum mxcts_exit)(which < 0 ? 0 : which);
  if (!rc && o->how == MXCTS_EXIT_SKIPPED) rc = load_cause(&at, doc, o);
  o->after_result = json_is_true(json_object_get(doc, "after_result"));
  o->code = (int)code;
  o->signal = (int)sig;
  free(how);
  free(path);
  json_decref(doc);
  if (rc) mxcts_outcome_free(o);
  return rc;
}

/* --- the host-wide lock ------------------------------------------------------------- */

/* -1: no lock wanted or it cannot be used (warned once); -2: busy; else fd. */
static int try_lock(const char *file, enum mxcts_lock_mode mode) {
  static bool warned;
  if (!file || mode == MXCTS_LOCK_NONE) return -1;
  int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (!warned) fprintf(stderr, "mxcts: warning: lock file %s: %s (running without it)\n", file,
                         strerror(errno));
    warned = true;
    return -1;
  }
  if (flock(fd, (mode == MXCTS_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) return fd;
  int err = errno;
  close(fd);
  if (err == EWOULDBLOCK || err == EINTR) return -2;
  if (!warned) fprintf(stderr, "mxcts: warning: lock file %s: %s (running without it)\n", file,
                       strerror(err));
  warned = true;
  return -1;
}

/* --- the results folder's lock --------------------------------------------------------- */

int mxcts_out_lock(const char *out) {
  int rc = mxcts_mkdirs(out);
  if (rc) return rc;
  char *path = mxcts_xasprintf("%s/mxcts.lock", out);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    rc = mxcts_set_error(MXR_ESYS, "%s: cannot open: %s", path, strerror(errno));
  } else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = "";
    ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
    pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
    rc = errno == EWOULDBLOCK
             ? mxcts_set_error(MXR_EINVAL, "%s is in use by another mxcts (pid %s): one run at a time "
                               "per results folder (--out)", out, *pid ? pid : "unknown")
             : mxcts_set_error(MXR_ESYS, "%s: cannot lock: %s", path, strerror(errno));
    close(fd);
  } else {
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
    } /* the pid is only for the message above */
  }
  free(path);
  return rc ? rc : fd;
}

/* --- spawning ------------------------------------------------------------------------- */

static const char *const stale_files[] = {"result.json", "outcome.json", "stdout.txt", "stderr.txt",
                                          "profile.json", NULL};

static int prepare_dir(const char *dir) {
  int rc = mxcts_mkdirs(dir);
  for (size_t i = 0; !rc && stale_files[i]; i++) {
    char *p = mxcts_xasprintf("%s/%s", dir, stale_files[i]);
    if (unlink(p) != 0 && errno != ENOENT)
      rc = mxcts_set_error(MXR_ESYS, "%s: cannot remove: %s", p, strerror(errno));
    free(p);
  }
  return rc;
}

/* In the child, between fork and exec: its own process group, killed if
 * mxcts dies (even by SIGKILL), default signal dispositions and an empty
 * mask, the files, the directory.  On failure the errno goes to `errfd`
 * (close-on-exec: a successful exec closes it, and the parent reads
 * nothing).  Only async-signal-safe calls: the strings were made before
 * fork. */
static _Noreturn void exec_child(const struct mxcts_proc *p, pid_t parent, const char *out,
                                 const char *err, int errfd) {
  static const int reset[] = {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD,
                              SIGUSR1, SIGUSR2, SIGALRM, SIGTTOU, SIGTTIN, SIGXFSZ};
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127); /* mxcts died before the line above */
  for (size_t i = 0; i < sizeof reset / sizeof *reset; i++) signal(reset[i], SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  int in = open("/dev/null", O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
      e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in >= 0 && o >= 0 && e >= 0 && dup2(in, 0) == 0 && dup2(o, 1) == 1 && dup2(e, 2) == 2 &&
      chdir(p->dir) == 0)
    execve(p->argv[0], p->argv, p->envp);
  int code = errno;
  ssize_t w = write(errfd, &code, sizeof code);
  (void)w;
  _exit(127);
}

/* Wait for the child's exec: 0, or the errno it sent (the child is reaped). */
static int exec_status(pid_t child, int readfd) {
  int code = 0;
  ssize_t r;
  while ((r = read(readfd, &code, sizeof code)) < 0 && errno == EINTR) {
  }
  if (r != (ssize_t)sizeof code) return 0;
  waitpid(child, NULL, 0);
  return code ? code : EINVAL;
}

/* 0 and *pid, or an errno value (the child could not be made or exec'd). */
static int spawn(const struct mxcts_proc *p, pid_t *pid) {
  char *out = mxcts_xasprintf("%s/stdout.txt", p->dir);
  char *err = mxcts_xasprintf("%s/stderr.txt", p->dir);
  int fds[2], code = 0;
  if (pipe2(fds, O_CLOEXEC) != 0) {
    code = errno;
  } else {
    pid_t parent = getpid(), child = fork();
    if (child == 0) exec_child(p, parent, out, err, fds[1]);
    code = child < 0 ? errno : 0;
    close(fds[1]);
    if (child > 0) {
      setpgid(child, child); /* also here: a kill of the group may come first */
      code = exec_status(child, fds[0]);
      if (!code) *pid = child;
    }
    close(fds[0]);
  }
  free(out);
  free(err);
  return code;
}

/* --- interrupts and orphans ---------------------------------------------------------- */

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
static bool catching;                   /* mxcts_run_catch_interrupts was called */
static volatile sig_atomic_t stopped_by; /* the first stop signal seen */

static void stop_set(sigset_t *set) {
  sigemptyset(set);
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) sigaddset(set, stop_signals[i]);
}

void mxcts_run_catch_interrupts(void) {
  sigset_t set;
  stop_set(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);
  catching = true;
}

int mxcts_run_interrupted(void) {
  if (!catching) return 0;
  sigset_t set;
  stop_set(&set);
  struct timespec zero = {0, 0};
  int sig;
  while ((sig = sigtimedwait(&set, NULL, &zero)) > 0)
    if (!stopped_by) stopped_by = sig;
  return stopped_by;
}

/* mxcts is a child subreaper: whatever a probe forked and left behind
 * (setsid or not) becomes mxcts's child when its parent ends.  Once no
 * probe runs, every child of mxcts is such an orphan: kill and reap it. */
static void kill_orphans(void) {
  DIR *d = opendir("/proc");
  if (!d) return;
  pid_t self = getpid();
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    const char *after = strrchr(buf, ')'); /* "pid (comm) state ppid ..." */
    char state;
    long ppid;
    if (!after || sscanf(after + 1, " %c %ld", &state, &ppid) != 2 || ppid != self) continue;
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, NULL, 0);
  }
  closedir(d);
}

/* --- the scheduler -------------------------------------------------------------------- */

struct slot {
  size_t proc;
  pid_t pid;
  double start, deadline, kill_at;
  bool termed;
  bool interrupted; /* stopped by an interrupt of mxcts: no outcome is recorded,
                       so that a resumed run starts it again */
  int lockfd;
};

/* A group whose process crashed or timed out: its later processes are skipped. */
struct failed_group {
  size_t group;
  char *id;             /* the failed process's (owned) */
  enum mxcts_exit how;  /* SIGNAL or TIMEOUT */
  int signal;
};

struct sched {
  const struct mxcts_proc *procs;
  const struct mxcts_run_opts *o;
  struct slot *slots;
  size_t nrunning;
  struct failed_group *failed;
  size_t nfailed;
  int rc;               /* the first internal error */
};

static bool is_failure(enum mxcts_exit how) { return how == MXCTS_EXIT_SIGNAL || how == MXCTS_EXIT_TIMEOUT; }

/* A crash or timeout ends its group, unless the process had finished its
 * work: its result is complete, and its config runs. */
static bool ends_group(const struct mxcts_outcome *o) { return is_failure(o->how) && !o->after_result; }

/* Did a process that ended badly write a complete result first? */
static bool wrote_result(const struct mxcts_proc *p, const struct mxcts_outcome *o) {
  bool bad = is_failure(o->how) || (o->how == MXCTS_EXIT_CODE && o->code != 0);
  if (!bad) return false;
  char *path = mxcts_xasprintf("%s/result.json", p->dir);
  struct mxcts_result r; /* zeroed when the load fails: free is safe */
  bool ok = mxcts_result_load(path, &r) == 0 && !strcmp(r.status, "ok");
  mxcts_result_free(&r);
  free(path);
  return ok;
}

static const struct failed_group *add_failure(struct sched *s, size_t group, const char *id,
                                              enum mxcts_exit how, int signal) {
  s->failed = mxcts_xrealloc(s->failed, (s->nfailed + 1) * sizeof *s->failed);
  s->failed[s->nfailed] = (struct failed_group){group, mxcts_xstrdup(id), how, signal};
  return &s->failed[s->nfailed++];
}

/* The failure another run wrote to the group file (share_failure), if any:
 * the file names the failed process's directory, whose outcome.json says
 * what it did. */
static const struct failed_group *shared_failure(struct sched *s, size_t group) {
  FILE *f = fopen(s->o->group_file, "r");
  if (!f) return NULL;
  char dir[4096];
  bool got = fgets(dir, sizeof dir, f) != NULL;
  fclose(f);
  dir[got ? strcspn(dir, "\n") : 0] = '\0';
  struct mxcts_outcome o;
  if (!*dir || mxcts_outcome_load(dir, &o)) return NULL;
  const struct failed_group *r = ends_group(&o) ? add_failure(s, group, dir, o.how, o.signal) : NULL;
  mxcts_outcome_free(&o);
  return r;
}

/* Tell the group's processes that later runs start (mxcts exec, one process
 * each) that procs[proc] failed: its directory, written to the group file
 * unless another failure got there first (link() does not replace).  Only
 * saves time, so a file that cannot be written is passed over. */
static void share_failure(const struct sched *s, size_t proc) {
  char *tmp = mxcts_xasprintf("%s.%ld.tmp", s->o->group_file, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (f) {
    bool written = fprintf(f, "%s\n", s->procs[proc].dir) > 0;
    /* link() fails when the file exists: the first failure stays. */
    if (fclose(f) == 0 && written && link(tmp, s->o->group_file) != 0) {
    }
  }
  unlink(tmp);
  free(tmp);
}

static const struct failed_group *group_failure(struct sched *s, size_t group) {
  if (group == MXCTS_NO_GROUP || s->o->keep_going) return NULL;
  for (size_t i = 0; i < s->nfailed; i++)
    if (s->failed[i].group == group) return &s->failed[i];
  return s->o->group_file ? shared_failure(s, group) : NULL;
}

static void note_failure(struct sched *s, size_t proc, const struct mxcts_outcome *out) {
  size_t group = s->procs[proc].group;
  if (!ends_group(out) || group == MXCTS_NO_GROUP || s->o->keep_going) return;
  if (s->o->group_file) share_failure(s, proc);
  if (!group_failure(s, group)) add_failure(s, group, s->procs[proc].id, out->how, out->signal);
}

/* procs[proc] is done, whatever happened to it. */
static void step(struct sched *s, size_t proc) {
  if (s->o->progress) mxcts__progress_step(s->o->progress);
  if (s->o->done) s->o->done(s->o->done_ctx, proc);
}

static void record(struct sched *s, size_t proc, struct mxcts_outcome *out) {
  out->timeout_s = s->procs[proc].timeout_s;
  out->after_result = wrote_result(&s->procs[proc], out);
  int rc = outcome_save(s->procs[proc].dir, out);
  if (rc && !s->rc) s->rc = rc;
  note_failure(s, proc, out); /* after the save: the group file points at it */
  mxcts_outcome_free(out);
  step(s, proc);
}

/* Record procs[i] as not run because of its group's failure `f`. */
static void skip_one(struct sched *s, size_t i, const struct failed_group *f) {
  struct mxcts_outcome out = {.how = MXCTS_EXIT_SKIPPED, .cause = f->how, .signal = f->signal};
  const char *what = f->how == MXCTS_EXIT_TIMEOUT ? "timed out" : "crashed";
  out.detail = mxcts_xasprintf("not run: %s %s (%s); later processes of its config were "
                               "skipped (--keep-going runs them)",
                               f->id, what,
                               f->how == MXCTS_EXIT_TIMEOUT ? "deadline"
                                                            : mxcts_signal_name(f->signal));
  int rc = prepare_dir(s->procs[i].dir);
  if (rc) {
    if (!s->rc) s->rc = rc;
    mxcts_outcome_free(&out);
    step(s, i);
    return;
  }
  record(s, i, &out);
}

/* Start procs[i]; false when the lock is busy (try again later). */
static bool start_one(struct sched *s, size_t i, enum mxcts_lock_mode mode) {
  const struct mxcts_proc *p = &s->procs[i];
  const struct failed_group *f = group_failure(s, p->group);
  if (f) {
    skip_one(s, i, f);
    return true;
  }
  int lockfd = try_lock(s->o->lock_file, mode);
  if (lockfd == -2) return false;
  if (s->o->progress) mxcts__progress_start(s->o->progress, p->id);
  struct mxcts_outcome out = {.how = MXCTS_EXIT_SPAWN};
  int rc = prepare_dir(p->dir);
  if (rc) {
    if (!s->rc) s->rc = rc;
    if (lockfd >= 0) close(lockfd);
    step(s, i);
    return true;
  }
  pid_t pid = -1;
  int e = spawn(p, &pid);
  if (e) {
    out.detail = mxcts_xasprintf("cannot start %s: %s", p->argv[0], strerror(e));
    if (lockfd >= 0) close(lockfd);
    record(s, i, &out);
    return true;
  }
  struct slot *sl = &s->slots[s->nrunning++];
  double now = mxcts_now();
  *sl = (struct slot){.proc = i, .pid = pid, .start = now, .deadline = now + p->timeout_s,
                      .lockfd = lockfd};
  return true;
}

static void finish(struct sched *s, size_t k, int status) {
  struct slot *sl = &s->slots[k];
  if (sl->interrupted) {
    kill(-sl->pid, SIGKILL);
    if (sl->lockfd >= 0) close(sl->lockfd);
    s->slots[k] = s->slots[--s->nrunning];
    return;
  }
  struct mxcts_outcome out = {0};
  out.wall_s = mxcts_now() - sl->start;
  if (sl->termed) {
    out.how = MXCTS_EXIT_TIMEOUT;
    out.detail = mxcts_xasprintf("killed after its %gs deadline", s->procs[sl->proc].timeout_s);
  } else if (WIFSIGNALED(status)) {
    out.how = MXCTS_EXIT_SIGNAL;
    out.signal = WTERMSIG(status);
  } else {
    out.how = MXCTS_EXIT_CODE;
    out.code = WEXITSTATUS(status);
  }
  kill(-sl->pid, SIGKILL); /* whatever the probe left behind in its group */
  if (sl->lockfd >= 0) close(sl->lockfd);
  record(s, sl->proc, &out);
  s->slots[k] = s->slots[--s->nrunning];
}

static void reap(struct sched *s) {
  for (size_t k = 0; k < s->nrunning;) {
    int status;
    pid_t r = waitpid(s->slots[k].pid, &status, WNOHANG);
    if (r == s->slots[k].pid) finish(s, k, status);
    else if (r < 0 && errno == ECHILD) finish(s, k, 0);
    else k++;
  }
}

static void enforce_deadlines(struct sched *s) {
  double now = mxcts_now();
  for (size_t k = 0; k < s->nrunning; k++) {
    struct slot *sl = &s->slots[k];
    if (!sl->termed && now >= sl->deadline) {
      kill(-sl->pid, SIGTERM);
      sl->termed = true;
      sl->kill_at = now + s->o->grace_s;
    } else if (sl->termed && now >= sl->kill_at) {
      kill(-sl->pid, SIGKILL);
      sl->kill_at = now + 1.0;
    }
  }
}

static void wait_child(struct sched *s, bool lock_busy) {
  double now = mxcts_now(), t = lock_busy ? 0.1 : 3600.0;
  if (s->o->progress && mxcts__progress_next_tick(s->o->progress) < t)
    t = mxcts__progress_next_tick(s->o->progress);
  for (size_t k = 0; k < s->nrunning; k++) {
    double until = (s->slots[k].termed ? s->slots[k].kill_at : s->slots[k].deadline) - now;
    if (until < t) t = until;
  }
  if (t < 0) t = 0;
  sigset_t set;
  if (catching) stop_set(&set); /* blocked: they wait here as SIGCHLD does */
  else sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
  int sig = sigtimedwait(&set, NULL, &ts);
  if (sig > 0 && sig != SIGCHLD && !stopped_by) stopped_by = sig;
}

/* An interrupt: every running probe's group gets SIGTERM now and SIGKILL
 * after the grace period; nothing more starts. */
static void stop_running(struct sched *s) {
  double now = mxcts_now();
  for (size_t k = 0; k < s->nrunning; k++) {
    struct slot *sl = &s->slots[k];
    if (sl->interrupted) continue;
    kill(-sl->pid, SIGTERM);
    sl->interrupted = sl->termed = true;
    sl->kill_at = now + s->o->grace_s;
  }
}

static void run_phase(struct sched *s, const size_t *idx, size_t n, size_t limit,
                      enum mxcts_lock_mode mode) {
  size_t next = 0;
  while (next < n || s->nrunning > 0) {
    if (mxcts_run_interrupted()) {
      stop_running(s);
      next = n;
    }
    bool busy = false;
    while (!busy && s->nrunning < limit && next < n) {
      busy = !start_one(s, idx[next], mode);
      if (!busy) next++;
    }
    if (busy && s->o->progress) mxcts__progress_note(s->o->progress, "waiting for the lock");
    if (s->nrunning == 0 && next >= n) break;
    wait_child(s, busy);
    reap(s);
    if (s->nrunning == 0) kill_orphans();
    enforce_deadlines(s);
    if (s->o->progress) mxcts__progress_tick(s->o->progress);
  }
}

int mxcts_run_procs(const struct mxcts_proc *procs, size_t n, const struct mxcts_run_opts *o) {
  size_t limit = o->jobs > 1 ? (size_t)o->jobs : 1;
  struct sched s = {.procs = procs, .o = o, .slots = mxcts_xcalloc(limit, sizeof *s.slots)};
  size_t *untimed = mxcts_xcalloc(n, sizeof *untimed), *timed = mxcts_xcalloc(n, sizeof *timed);
  size_t nu = 0, nt = 0;
  for (size_t i = 0; i < n; i++) {
    if (procs[i].timed) timed[nt++] = i;
    else untimed[nu++] = i;
  }
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old_mask);
  struct sigaction old_act, dfl = {.sa_handler = SIG_DFL};
  sigaction(SIGCHLD, NULL, &old_act);
  bool was_ignored = old_act.sa_handler == SIG_IGN;
  if (was_ignored) sigaction(SIGCHLD, &dfl, NULL);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  run_phase(&s, untimed, nu, limit, MXCTS_LOCK_SHARED);
  run_phase(&s, timed, nt, 1, MXCTS_LOCK_EXCLUSIVE);
  kill_orphans();
  if (was_ignored) sigaction(SIGCHLD, &old_act, NULL);
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  free(untimed);
  free(timed);
  free(s.slots);
  for (size_t i = 0; i < s.nfailed; i++) free(s.failed[i].id);
  free(s.failed);
  return s.rc;
}
