/*
 * mxr-info: what this libmxref was built with, which GPUs it sees,
 * (--env) the MXNET_* variables it honours with the values in effect, and
 * (--ops) every operator name it lists, implemented or not.
 *
 * Exit status: 0 on success, 1 on a usage or output error, 2 when the
 * MXNET_* environment is invalid (the library's message goes to stderr), so
 * scripts can use `mxr-info` to validate an environment before a long run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mxref/mxref.h"

#define WRAP_WIDTH 78

static void usage(FILE *f) {
  fputs("usage: mxr-info [--env] [--ops] [--help] [--version]\n"
        "\n"
        "Print the libmxref version, whether it was built with CUDA and cuDNN, and\n"
        "the GPUs it can use.\n"
        "\n"
        "  --env      also list every MXNET_* environment variable: the value in\n"
        "             effect, its default, the values accepted and what it does\n"
        "  --ops      also list every operator name, one a line: the name, then\n"
        "             \"implemented\" or \"not implemented\" (a name MXNet 1.9.1\n"
        "             registers that libmxref lists so that MXNet's frontends find\n"
        "             it; using it fails), and \"alias of X\" for an alias; then\n"
        "             the counts\n"
        "  --version  print the version only\n"
        "  --help     print this help\n"
        "\n"
        "The variables are read once, when the library is loaded.  If one of them\n"
        "holds a value that is not accepted, mxr-info prints the error to stderr and\n"
        "exits with status 2.  Other exit statuses: 0 success, 1 usage or output\n"
        "error.\n",
        f);
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }

static void print_gpus(void) {
  int n = mxr_gpu_count();
  if (n == 0) {
    printf("GPUs:    0 (%s)\n", mxr_gpu_unavailable_reason());
    return;
  }
  printf("GPUs:    %d\n", n);
  for (int i = 0; i < n; i++) {
    struct mxr_gpu_info info;
    if (mxr_gpu_get_info(i, &info) != 0) {
      printf("  gpu %d: %s\n", i, mxr_last_error());
      continue;
    }
    printf("  gpu %d: %s, compute capability %d.%d, %.1f GiB, %d multiprocessors\n", i,
           info.name, info.cc_major, info.cc_minor,
           (double)info.total_mem / (1024.0 * 1024.0 * 1024.0), info.multiprocessors);
  }
}

static void print_build(void) {
  printf("libmxref %s\n", PACKAGE_VERSION);
  printf("CUDA:    %s\n", yes_no(mxr_built_with_cuda()));
  printf("cuDNN:   %s\n", yes_no(mxr_built_with_cudnn()));
  print_gpus();
  printf("engine:  %s\n", mxr_engine_type_name(mxr_config_get()->engine_type));
}

/* ---- --env -------------------------------------------------------------- */

static const struct mxr_config_var *var_named(const char *name) {
  for (size_t i = 0; i < mxr_config_var_count(); i++)
    if (strcmp(mxr_config_var_at(i)->name, name) == 0) return mxr_config_var_at(i);
  return NULL;
}

/* The value in effect, as text.  The configuration was valid (checked before
 * listing), and this process never changes its environment, so a set
 * variable's value is the one the library accepted at load; an unset one
 * takes its default, which may be another variable's value. */
static const char *value_in_effect(const struct mxr_config_var *v, const char **how) {
  const char *set = getenv(v->name);
  if (set) {
    *how = "set";
    return set;
  }
  const struct mxr_config_var *from = var_named(v->fallback);
  if (from) {
    const char *ignored;
    *how = "default";
    return value_in_effect(from, &ignored);
  }
  *how = "default";
  return v->fallback;
}

/* Print `text` wrapped at WRAP_WIDTH, each line starting with `indent`. */
static void print_wrapped(const char *indent, const char *text) {
  size_t col = 0;
  const char *p = text;
  while (*p) {
    while (*p == ' ') p++;
    size_t word = strcspn(p, " ");
    if (word == 0) break;
    if (col > 0 && col + 1 + word > WRAP_WIDTH) {
      putchar('\n');
      col = 0;
    }
    if (col == 0) {
      col = strlen(indent);
      fputs(indent, stdout);
    } else {
      col++;
      putchar(' ');
    }
    col += word;
    fwrite(p, 1, word, stdout);
    p += word;
  }
  if (col > 0) putchar('\n');
}

static void print_env(void) {
  printf("\nMXNET_* environment variables (read once, when the library was loaded):\n");
  for (size_t i = 0; i < mxr_config_var_count(); i++) {
    const struct mxr_config_var *v = mxr_config_var_at(i);
    const char *how;
    const char *value = value_in_effect(v, &how);
    printf("\n%s = %s (%s)\n", v->name, value, how);
    printf("    kind:     %s\n", v->kind);
    printf("    default:  %s\n", v->fallback);
    printf("    accepted: %s\n", v->accepted);
    print_wrapped("    ", v->doc);
  }
}

/* ---- --ops -------------------------------------------------------------- */

static void print_ops(void) {
  size_t n = mxr_op_name_count(), implemented = 0;
  printf("\nOperators (%zu names, aliases included):\n", n);
  for (size_t i = 0; i < n; i++) {
    const char *name = mxr_op_name_at(i);
    const mxr_op *op = NULL;
    if (mxr_op_find(name, &op) != 0) continue;
    bool impl = mxr_op_is_implemented(op) != 0;
    implemented += impl;
    if (strcmp(name, mxr_op_name(op)) != 0)
      printf("%s\t%s, alias of %s\n", name, impl ? "implemented" : "not implemented", mxr_op_name(op));
    else
      printf("%s\t%s\n", name, impl ? "implemented" : "not implemented");
  }
  printf("%zu names implemented, %zu not implemented\n", implemented, n - implemented);
}

/* ---- main --------------------------------------------------------------- */

struct options {
  bool env, ops, help, version;
};

static int parse_args(int argc, char **argv, struct options *o) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--env") == 0)
      o->env = true;
    else if (strcmp(argv[i], "--ops") == 0)
      o->ops = true;
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      o->help = true;
    else if (strcmp(argv[i], "--version") == 0)
      o->version = true;
    else {
      fprintf(stderr, "mxr-info: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 1;
    }
  }
  return 0;
}

static int finish(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    perror("mxr-info: writing output");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct options o = {false, false, false, false};
  if (parse_args(argc, argv, &o) != 0) return 1;
  if (o.help) {
    usage(stdout);
    return finish();
  }
  if (o.version) {
    printf("%s\n", PACKAGE_VERSION);
    return finish();
  }
  if (mxr_config_status() != 0) {
    fprintf(stderr, "mxr-info: invalid MXNET_* environment: %s\n", mxr_last_error());
    return 2;
  }
  print_build();
  if (o.env) print_env();
  if (o.ops) print_ops();
  return finish();
}
