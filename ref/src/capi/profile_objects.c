/*
 * C API: the profiler's objects (MXNet's profiler.Domain, Task, Frame,
 * Event, Counter and Marker).  Tasks, frames and events are durations: a
 * start and a stop record one span in the trace under the object's name
 * (category "operator", on the CPU's pid, whatever the domain), so that
 * they also count in the aggregate statistics.  Counters keep their value
 * and markers are accepted; neither writes trace events.
 */
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "mxref/profiler.h"

static int create(const char *fn, enum capi_profile_kind kind, ProfileHandle domain,
                  const char *name, ProfileHandle *out) {
  if (!name || !out) return capi_ret(mxr__capi_null(fn, name ? "out" : "name"));
  if (domain) {
    if (mxr__capi_check(domain, CAPI_PROFILE_OBJECT, fn, "domain")) return -1;
    if (((struct capi_profile_object *)domain)->kind != PROF_DOMAIN)
      return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the domain handle is not a domain", fn));
  }
  struct capi_profile_object *o = mxr__capi_handle_new(CAPI_PROFILE_OBJECT);
  char *copy = strdup(name);
  if (!o || !copy) {
    free(copy);
    if (o) mxr__capi_handle_release(o);
    return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  }
  o->kind = kind;
  o->name = copy;
  *out = o;
  return 0;
}

int MXProfileCreateDomain(const char *domain, ProfileHandle *out) {
  return create("MXProfileCreateDomain", PROF_DOMAIN, NULL, domain, out);
}

int MXProfileCreateTask(ProfileHandle domain, const char *task_name, ProfileHandle *out) {
  return create("MXProfileCreateTask", PROF_TASK, domain, task_name, out);
}

int MXProfileCreateFrame(ProfileHandle domain, const char *frame_name, ProfileHandle *out) {
  return create("MXProfileCreateFrame", PROF_FRAME, domain, frame_name, out);
}

int MXProfileCreateEvent(const char *event_name, ProfileHandle *out) {
  return create("MXProfileCreateEvent", PROF_EVENT, NULL, event_name, out);
}

int MXProfileCreateCounter(ProfileHandle domain, const char *counter_name, ProfileHandle *out) {
  return create("MXProfileCreateCounter", PROF_COUNTER, domain, counter_name, out);
}

static int object(ProfileHandle h, const char *fn, struct capi_profile_object **out) {
  if (mxr__capi_check(h, CAPI_PROFILE_OBJECT, fn, "handle")) return -1;
  *out = h;
  return 0;
}

int MXProfileDestroyHandle(ProfileHandle frame_handle) {
  struct capi_profile_object *o;
  if (object(frame_handle, "MXProfileDestroyHandle", &o)) return -1;
  free(o->name);
  mxr__capi_handle_release(o);
  return 0;
}

static struct mxr_op_event span_of(const struct capi_profile_object *o) {
  return (struct mxr_op_event){.name = o->name, .ctx = mxr_cpu(0), .profile = MXR_PROFILE_ALL};
}

static int duration(const char *fn, ProfileHandle h, struct capi_profile_object **out) {
  if (object(h, fn, out)) return -1;
  enum capi_profile_kind k = (*out)->kind;
  if (k != PROF_TASK && k != PROF_FRAME && k != PROF_EVENT)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the handle is not a task, frame or event", fn));
  return 0;
}

int MXProfileDurationStart(ProfileHandle duration_handle) {
  struct capi_profile_object *o;
  if (duration("MXProfileDurationStart", duration_handle, &o)) return -1;
  struct mxr_op_event ev = span_of(o);
  o->cookie = mxr_profiler_span_begin(&ev);
  return 0;
}

int MXProfileDurationStop(ProfileHandle duration_handle) {
  struct capi_profile_object *o;
  if (duration("MXProfileDurationStop", duration_handle, &o)) return -1;
  struct mxr_op_event ev = span_of(o);
  mxr_profiler_span_end(&ev, o->cookie);
  o->cookie = 0;
  return 0;
}

static int counter(const char *fn, ProfileHandle h, struct capi_profile_object **out) {
  if (object(h, fn, out)) return -1;
  if ((*out)->kind != PROF_COUNTER) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: the handle is not a counter", fn));
  return 0;
}

int MXProfileSetCounter(ProfileHandle counter_handle, uint64_t value) {
  struct capi_profile_object *o;
  if (counter("MXProfileSetCounter", counter_handle, &o)) return -1;
  o->value = value;
  return 0;
}

int MXProfileAdjustCounter(ProfileHandle counter_handle, int64_t value) {
  struct capi_profile_object *o;
  if (counter("MXProfileAdjustCounter", counter_handle, &o)) return -1;
  o->value += (uint64_t)value;
  return 0;
}

int MXProfileSetMarker(ProfileHandle domain, const char *instant_marker_name, const char *scope) {
  static const char fn[] = "MXProfileSetMarker";
  struct capi_profile_object *o;
  if (object(domain, fn, &o)) return -1;
  if (!instant_marker_name || !scope) return capi_ret(mxr__capi_null(fn, scope ? "instant_marker_name" : "scope"));
  if (strcmp(scope, "global") && strcmp(scope, "process") && strcmp(scope, "thread") &&
      strcmp(scope, "task") && strcmp(scope, "marker"))
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: scope '%s' is not global, process, thread, task or marker", fn, scope));
  return 0;
}
