/*
 * Internal: a library of the CUDA toolkit loaded on first use (cuBLAS,
 * cuDNN: cuda/cublas.cu, cuda/cudnn.cu), so that processes that never need
 * it do not pay for loading it.  Include only from .cu files, after
 * config.h (MXR_CUDA_LIBDIR, and MXR_CUDNN_LIBDIR with --with-cudnn=DIR).
 *
 * A loaded library's functions are listed once, as an X-macro of
 * X(member, symbol) entries (MXR_CUBLAS_FUNCTIONS in cuda/cublas.h); that
 * list makes the table of function pointers (MXR_DL_MEMBER) and the loop
 * that resolves them (MXR_DL_RESOLVE):
 *
 *   struct Api { MXR_CUBLAS_FUNCTIONS(MXR_DL_MEMBER) };
 *
 *   bool load(mxr_dl::Library &lib, Api &api) {
 *     return lib.open() && MXR_CUBLAS_FUNCTIONS(MXR_DL_RESOLVE) true;
 *   }
 *   mxr_dl::Loaded<Api> cublas("cuBLAS", "libcublas.so.12", load);
 *   const Api *api = cublas.get();  // NULL with the last error set
 *
 * The library stays loaded for the life of the process.  A Library is not
 * thread-safe by itself; Loaded loads it once (std::call_once).
 */
#ifndef MXR_CUDA_DL_LIBRARY_H
#define MXR_CUDA_DL_LIBRARY_H

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <dlfcn.h>

#include "mxref/error.h"

#define MXR_DL_STR2(x) #x
#define MXR_DL_STR(x) MXR_DL_STR2(x) /* a version macro as text */

/* X(member, symbol) as a member of the function table: a pointer of the
 * symbol's type (from the library's header). */
#define MXR_DL_MEMBER(member, symbol) decltype(&symbol) member;

/* X(member, symbol) as a step of the resolving loop, with a Library `lib`
 * and the table `api` in scope (a Loaded's load function): resolves the symbol into api.member, and
 * ends the && chain at the first one missing (lib.failure names it). */
#define MXR_DL_RESOLVE(member, symbol) lib.resolve(#symbol, &api.member) &&

namespace mxr_dl {

class Library {
 public:
  char failure[512] = ""; /* why open() or resolve() failed */

  /* `what` names the library in messages; `soname` is looked up first in
   * the directory configure was given for it (libcudnn*: --with-cudnn=DIR),
   * then as the dynamic linker does (LD_LIBRARY_PATH, the ld.so cache),
   * then in the toolkit's library directory that configure found. */
  Library(const char *what, const char *soname) : what_(what), soname_(soname) {}

  bool open() {
    char configured[512] = "";
    const char *dir = configured_dir(soname_);
    if (dir) {
      std::snprintf(configured, sizeof configured, "%s/%s", dir, soname_);
      handle_ = dlopen(configured, RTLD_NOW | RTLD_LOCAL);
      if (handle_) return true;
    }
    handle_ = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (handle_) return true;
    char in_toolkit[512];
    std::snprintf(in_toolkit, sizeof in_toolkit, "%s/%s", MXR_CUDA_LIBDIR, soname_);
    handle_ = dlopen(in_toolkit, RTLD_NOW | RTLD_LOCAL);
    if (handle_) return true;
    const char *why = dlerror();
    fail("%s could not be loaded (%s%s%s, nor %s): %s", what_, configured, dir ? ", " : "",
         soname_, in_toolkit, why ? why : "unknown error");
    return false;
  }

  template <typename F>
  bool resolve(const char *name, F *out) {
    void *sym = dlsym(handle_, name);
    if (!sym) {
      fail("%s: %s has no %s", what_, soname_, name);
      return false;
    }
    *out = reinterpret_cast<F>(sym);
    return true;
  }

  /* Record a failure of the caller's own checks (a version mismatch). */
  __attribute__((format(printf, 2, 3))) void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(failure, sizeof failure, fmt, ap);
    va_end(ap);
  }

  const char *soname() const { return soname_; }

 private:
  /* The library directory configure was given for this library, if any. */
  static const char *configured_dir(const char *soname) {
#ifdef MXR_CUDNN_LIBDIR
    if (std::strncmp(soname, "libcudnn", 8) == 0) return MXR_CUDNN_LIBDIR;
#endif
    (void)soname;
    return nullptr;
  }

  const char *what_, *soname_;
  void *handle_ = nullptr;
};

/* A library's function table `Api`, loaded by `load` on the first get(). */
template <typename Api>
class Loaded {
 public:
  using LoadFn = bool (*)(Library &lib, Api &api);

  Loaded(const char *what, const char *soname, LoadFn load) : lib_(what, soname), load_(load) {}

  /* The table, loaded once (thread-safe); NULL with the last error set,
   * naming the library and why it could not be loaded, when it cannot. */
  const Api *get() {
    std::call_once(once_, [this] { loaded_ = load_(lib_, api_); });
    if (loaded_) return &api_;
    mxr_set_error(MXR_ECUDA, "%s", lib_.failure);
    return nullptr;
  }

 private:
  Library lib_;
  LoadFn load_;
  Api api_{};
  bool loaded_ = false;
  std::once_flag once_;
};

}  // namespace mxr_dl

#endif /* MXR_CUDA_DL_LIBRARY_H */
