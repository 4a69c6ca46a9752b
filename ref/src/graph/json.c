/* Symbol JSON load/save: being written. */
#include "graph/graph.h"

int mxr_symbol_from_json(const char *json, mxr_symbol **out) {
  (void)json;
  (void)out;
  return mxr_set_error(MXR_ENOTFOUND, "symbol JSON loading is not available yet");
}

int mxr_symbol_to_json(const mxr_symbol *sym, char **out) {
  (void)sym;
  (void)out;
  return mxr_set_error(MXR_ENOTFOUND, "symbol JSON saving is not available yet");
}
