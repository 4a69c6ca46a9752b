/*
 * libFuzzer target for the symbol JSON loader (ref/src/graph/json.c).
 *
 * Each input is loaded as symbol JSON.  A failure must be a negative status
 * with a message.  A success must save, the saved text must load again, and
 * saving that gives the same text (saving is a fixed point).  The name
 * lists are built too, since they walk the loaded graph.
 *
 * Build and run: build-aux/run_fuzz.sh --target symbol_json (docs/symbol-json.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxref/error.h"
#include "mxref/symbol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *text) {
  fprintf(stderr, "fuzz_symbol_json: %s: %s\n--- text ---\n%s\n", what, mxr_last_error(),
          text ? text : "(none)");
  abort();
}

static void walk_lists(const mxr_symbol *s) {
  int n;
  const char *const *names;
  if (mxr_symbol_list_arguments(s, &n, &names) || mxr_symbol_list_outputs(s, &n, &names) ||
      mxr_symbol_list_auxiliary_states(s, &n, &names))
    die("listing names of a loaded symbol failed", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0'; /* the API takes a C string: text ends at the first NUL */

  mxr_symbol *s = NULL;
  int st = mxr_symbol_from_json(text, &s);
  if (st != 0) {
    if (st > 0 || s != NULL || mxr_last_error()[0] == '\0') die("bad failure report", text);
    free(text);
    return 0;
  }
  walk_lists(s);
  char *saved = NULL;
  if (mxr_symbol_to_json(s, &saved) != 0) die("saving a loaded symbol failed", text);
  mxr_symbol *again = NULL;
  if (mxr_symbol_from_json(saved, &again) != 0) die("reloading the saved text failed", saved);
  walk_lists(again);
  char *resaved = NULL;
  if (mxr_symbol_to_json(again, &resaved) != 0) die("saving the reloaded symbol failed", saved);
  if (strcmp(saved, resaved) != 0) {
    fprintf(stderr, "fuzz_symbol_json: saving is not a fixed point\n--- first ---\n%s\n"
                    "--- second ---\n%s\n", saved, resaved);
    abort();
  }
  free(resaved);
  free(saved);
  mxr_symbol_free(again);
  mxr_symbol_free(s);
  free(text);
  return 0;
}
