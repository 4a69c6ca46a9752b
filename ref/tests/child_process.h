/*
 * Test support for tests that run their own binary again as a child process,
 * so that something read once at library load (the environment) can be set
 * per case.  Static inline only.
 */
#ifndef MXR_TESTS_CHILD_PROCESS_H
#define MXR_TESTS_CHILD_PROCESS_H

#include <check.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Whether `var` ("NAME=value") starts with one of the NULL-terminated prefixes. */
static inline bool tu_has_prefix(const char *var, const char *const *prefixes) {
  for (; *prefixes; prefixes++)
    if (strncmp(var, *prefixes, strlen(*prefixes)) == 0) return true;
  return false;
}

/* This process's environment without the variables matching `drop`, plus
 * `add` (both NULL-terminated).  The rest is kept: a libtool-built test may
 * need LD_LIBRARY_PATH.  The strings are borrowed; free the array only. */
static inline char **tu_child_environment(const char *const *drop, const char *const *add) {
  size_t n = 0, nadd = 0;
  while (environ[n]) n++;
  while (add[nadd]) nadd++;
  char **env = calloc(n + nadd + 1, sizeof *env);
  ck_assert_ptr_nonnull(env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!tu_has_prefix(environ[i], drop)) env[k++] = environ[i];
  for (size_t i = 0; i < nadd; i++) env[k++] = (char *)add[i];
  env[k] = NULL;
  return env;
}

/* Run this test binary (/proc/self/exe) with `argv` in the environment
 * tu_child_environment(drop, add); fails the test unless it exits 0.
 * Returns what it printed on stdout (at most 64 KiB; caller frees). */
static inline char *tu_run_self(char *const *argv, const char *const *drop, const char *const *add) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  posix_spawn_file_actions_t fa;
  ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
  ck_assert_int_eq(posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO), 0);
  ck_assert_int_eq(posix_spawn_file_actions_addclose(&fa, fd[0]), 0);
  char **env = tu_child_environment(drop, add);
  pid_t pid;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env);
  ck_assert_msg(rc == 0, "posix_spawn: %s", strerror(rc));
  close(fd[1]);
  free(env);
  posix_spawn_file_actions_destroy(&fa);

  size_t cap = 65536, len = 0;
  char *out = malloc(cap);
  ck_assert_ptr_nonnull(out);
  ssize_t got;
  while (len < cap - 1 && (got = read(fd[0], out + len, cap - 1 - len)) > 0) len += (size_t)got;
  out[len] = '\0';
  close(fd[0]);
  int wstatus;
  ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
  ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "child failed: %s", out);
  return out;
}

#endif
