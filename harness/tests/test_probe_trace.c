/* Reading profiler traces into pass structures (probe/probe.h): segment
 * kinds and sizes, helper ops, pass markers, and CUDA graph spans, which
 * are counted apart and never as engine ops. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_tap.h"
#include "harness_util.h"
#include "probe/probe.h"

/* Write `events` (a JSON array body) as a trace file; returns its path. */
static char *write_trace(const char *dir, const char *events) {
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  ck_assert_ptr_nonnull(path);
  snprintf(path, n, "%s/profile.json", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "{\"traceEvents\": [%s], \"displayTimeUnit\": \"ms\"}", events);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

#define OP(name, cat, ts) \
  "{\"name\": \"" name "\", \"cat\": \"" cat "\", \"ph\": \"B\", \"ts\": " #ts ", \"pid\": 0, \"tid\": 1}"

START_TEST(test_segments_helpers_and_markers) {
  char *dir = hu_tmpdir();
  char *path = write_trace(dir, OP("[flip,flip,flip]", "operator", 1) ","
                                OP("WaitForVar", "operator", 2) ","
                                OP("flip", "operator", 3) ","
                                OP("mxcts-pass:forward", "operator", 4) ","
                                OP("flip,flip", "operator", 5) ","
                                OP("ImperativeBulk", "operator", 6) ","
                                OP("mxcts-pass:backward", "operator", 7));
  struct mxcts_pass_structure s[2];
  char err[512];
  ck_assert_msg(mxcts_trace_read_passes(path, s, 2, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(s[0].engine_ops, 2);
  ck_assert_int_eq(s[0].segments, 1);
  ck_assert_int_eq(s[0].helper_ops, 1);
  ck_assert_int_eq(s[0].segment_sizes[0], 3);
  ck_assert_int_eq(s[0].segment_sizes[1], 1);
  ck_assert_int_eq(s[1].engine_ops, 2);
  ck_assert_int_eq(s[1].bulks, 1);
  ck_assert_int_eq(s[1].segment_sizes[0], 2);
  ck_assert_int_eq(s[1].segment_sizes[1], -1);
  ck_assert_int_eq(s[0].graph_launches + s[1].graph_launches, 0);
  mxcts_trace_free(&s[0]);
  mxcts_trace_free(&s[1]);
  /* three markers asked for, two in the file */
  struct mxcts_pass_structure t[3];
  ck_assert_int_eq(mxcts_trace_read_passes(path, t, 3, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "2 of 3 pass markers found"));
  free(path);
  hu_cleanup(dir);
}
END_TEST

/* libmxref's spans (mxref/profiler.h) nest in the segment they ran in. */
START_TEST(test_cuda_graph_spans_are_counted_apart) {
  char *dir = hu_tmpdir();
  char *path = write_trace(dir, OP("[flip,flip]", "operator", 1) ","
                                OP("CudaGraphCapture", "cuda_graph", 2) ","
                                OP("[flip,flip]", "operator", 3) ","
                                OP("CudaGraphLaunch", "cuda_graph", 4) ","
                                OP("flip", "operator", 5) ","
                                /* the category decides, not the name */
                                OP("CudaGraphLaunch", "operator", 6));
  struct mxcts_pass_structure s;
  char err[512];
  ck_assert_msg(mxcts_trace_read(path, &s, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(s.graph_launches, 2);
  ck_assert_int_eq(s.graph_captures, 1);
  ck_assert_int_eq(s.engine_ops, 4);
  ck_assert_int_eq(s.segments, 2);
  ck_assert_str_eq(s.names[3], "CudaGraphLaunch");
  mxcts_trace_free(&s);
  free(path);
  hu_cleanup(dir);
}
END_TEST

/* CopyFromTo's copies are helpers in every direction: a pass that copied a
 * head gradient between devices has only its graph ops counted. */
START_TEST(test_copies_are_helpers_in_every_direction) {
  char *dir = hu_tmpdir();
  char *path = write_trace(dir, OP("CopyCPU2GPU", "operator", 1) ","
                                OP("[flip,flip]", "operator", 2) ","
                                OP("CopyGPU2GPU", "operator", 3) ","
                                OP("mxcts-pass:forward", "operator", 4) ","
                                OP("CopyCPU2CPU", "operator", 5) ","
                                OP("flip", "operator", 6) ","
                                OP("CopyGPU2CPU", "operator", 7) ","
                                OP("mxcts-pass:backward", "operator", 8));
  struct mxcts_pass_structure s[2];
  char err[512];
  ck_assert_msg(mxcts_trace_read_passes(path, s, 2, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(s[0].engine_ops, 1);
  ck_assert_int_eq(s[0].helper_ops, 2);
  ck_assert_int_eq(s[0].segments, 1);
  ck_assert_str_eq(s[0].names[0], "[flip,flip]");
  ck_assert_int_eq(s[1].engine_ops, 1);
  ck_assert_int_eq(s[1].helper_ops, 2);
  ck_assert_str_eq(s[1].names[0], "flip");
  mxcts_trace_free(&s[0]);
  mxcts_trace_free(&s[1]);
  /* The single-pass reader counts them the same way. */
  struct mxcts_pass_structure all;
  ck_assert_msg(mxcts_trace_read(path, &all, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(all.helper_ops, 4);
  ck_assert_int_eq(all.engine_ops, 4); /* the two markers and the two graph ops */
  for (int i = 0; i < all.num_names; i++)
    ck_assert_msg(strncmp(all.names[i], "Copy", 4) != 0, "%s counted as an engine op", all.names[i]);
  mxcts_trace_free(&all);
  free(path);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_bad_traces_name_the_file) {
  char *dir = hu_tmpdir();
  char *path = write_trace(dir, "{\"name\": ");
  struct mxcts_pass_structure s;
  char err[512];
  ck_assert_int_eq(mxcts_trace_read(path, &s, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, path));
  ck_assert_ptr_nonnull(strstr(err, "not valid JSON"));
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("{\"events\": []}", f);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(mxcts_trace_read(path, &s, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "no \"traceEvents\" array"));
  free(path);
  hu_cleanup(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("probe_trace");
  TCase *tc = tcase_create("probe_trace");
  tcase_add_test(tc, test_segments_helpers_and_markers);
  tcase_add_test(tc, test_cuda_graph_spans_are_counted_apart);
  tcase_add_test(tc, test_copies_are_helpers_in_every_direction);
  tcase_add_test(tc, test_bad_traces_name_the_file);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
