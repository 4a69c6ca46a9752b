/*
 * Internal: the element functions of the elementwise ops and the
 * broadcasting layout, shared by the CPU loops (op/elemwise.c) and the
 * CUDA kernels (op/cuda/elemwise.cu) so that both devices compute the same
 * formula, in double, rounded once on store.  Include only from those two
 * files: the short names (F_*, G_*, K_*) are theirs.
 */
#ifndef MXR_OP_ELEMWISE_FN_H
#define MXR_OP_ELEMWISE_FN_H

#include <math.h>
#include <stdint.h>

#include "mxref/base.h"
#include "op/random_fn.h"

#ifdef __CUDACC__
#define MXR_HD __host__ __device__
#else
#define MXR_HD
#endif

/* MXNet keeps these constants as float. */
#define SELU_ALPHA_F 1.6732632423543772848170429916717f
#define SELU_LAMBDA_F 1.0507009873554804934193349852946f
#define SQRT2_F 1.4142135623730950488016887242096f
#define PI_F 3.14159265358979323846f

/* One code per elementwise function of up to three operands.  Forward
 * functions take x (and a second operand b); gradient functions take the
 * head gradient g first and return g times the local derivative. */
enum efn {
  F_NEG, F_EXP, F_LOG, F_SQRT, F_SQUARE, F_RELU, F_SIGMOID, F_TANH, F_SOFTRELU, F_SOFTSIGN,
  F_SELU, F_GELU,
  F_ADD, F_SUB, F_MUL, F_DIV, F_RSUB, F_RDIV, /* x op b; R*: b op x */
  F_XELU,  /* x > 0 ? x : b * x (in float) */
  F_ELU,   /* x > 0 ? x : b * expm1(x) */
  /* gradients: (g, b, c) */
  G_LOG,      /* b = x */
  G_SQRT,     /* b = y */
  G_SQUARE,   /* b = x */
  G_RELU,     /* b = y */
  G_SIGMOID,  /* b = y */
  G_TANH,     /* b = y */
  G_SOFTRELU, /* b = y */
  G_SOFTSIGN, /* b = x */
  G_XELU,     /* b = y, c = slope */
  G_ELU,      /* b = y, c = slope */
  G_SELU,     /* b = y (MXNet's formula, see below) */
  G_GELU,     /* b = x */
  G_RDIV,     /* b = x, c = scalar: d(c / x) */
};

static inline MXR_HD double gelu_of(double x) {
  float xf = (float)x;
  return (double)(0.5f * xf * (1.0f + erff(xf / SQRT2_F)));
}

static inline MXR_HD double gelu_grad_of(double x) {
  float xf = (float)x, z = xf / SQRT2_F;
  float erf_slope = (float)(2.0 / (double)sqrtf(PI_F) * (double)expf(-(z * z)));
  return (double)(0.5f * (1.0f + erff(z) + xf * erf_slope / SQRT2_F));
}

static inline MXR_HD double elemwise_eval(int fn, double a, double b, double c) {
  switch (fn) {
    case F_NEG: return -a;
    case F_EXP: return exp(a);
    case F_LOG: return log(a);
    case F_SQRT: return sqrt(a);
    case F_SQUARE: return a * a;
    case F_RELU: return isnan(a) || a > 0 ? a : 0.0; /* NaN passes, as in MXNet */
    case F_SIGMOID: return 1.0 / (1.0 + exp(-a));
    case F_TANH: return tanh(a);
    case F_SOFTRELU: return a > 20.0 ? a : log1p(exp(a));
    case F_SOFTSIGN: return a / (1.0 + fabs(a));
    case F_SELU:
      return (double)SELU_LAMBDA_F * (a > 0 ? a : (double)SELU_ALPHA_F * expm1(a));
    case F_GELU: return gelu_of(a);
    case F_ADD: return a + b;
    case F_SUB: return a - b;
    case F_MUL: return a * b;
    case F_DIV: return a / b;
    case F_RSUB: return b - a;
    case F_RDIV: return b / a;
    case F_XELU: return a > 0 ? a : (double)((float)a * (float)b);
    case F_ELU: return a > 0 ? a : b * expm1(a);
    case G_LOG: return a / b;
    case G_SQRT: return a * (0.5 / b);
    case G_SQUARE: return a * (2.0 * b);
    case G_RELU: return a * (isnan(b) ? b : (b > 0 ? 1.0 : 0.0));
    case G_SIGMOID: return a * (b * (1.0 - b));
    case G_TANH: return a * (1.0 - b * b);
    case G_SOFTRELU: return a * -expm1(-b);
    case G_SOFTSIGN: return a / ((1.0 + fabs(b)) * (1.0 + fabs(b)));
    case G_XELU: return a * (b > 0 ? 1.0 : c);
    case G_ELU: return a * (b > 0 ? 1.0 : c + b);
    /* MXNet 1.9.1 evaluates lambda * (alpha + y) on the output y for y <= 0;
     * the exact derivative would be y + lambda * alpha.  Kept for parity. */
    case G_SELU: return a * (double)SELU_LAMBDA_F * (b > 0 ? 1.0 : (double)SELU_ALPHA_F + b);
    case G_GELU: return a * gelu_grad_of(b);
    case G_RDIV: return a * (-c / (b * b));
  }
  return NAN;
}

/* Gradient kinds of the broadcast binary ops (and PReLU's). */
enum gkind { K_ADD, K_SUB, K_MUL, K_DIV, K_PRELU };

/* The term one element of the head gradient g adds to the gradient of the
 * lhs (side 0) or rhs (side 1), given the operands a and b there. */
static inline MXR_HD double bcast_grad_term(int kind, int side, double g, double a, double b) {
  switch (kind) {
    case K_ADD: return g;
    case K_SUB: return side ? -g : g;
    case K_MUL: return side ? g * a : g * b;
    case K_DIV: return side ? g * (-a / (b * b)) : g / b;
    case K_PRELU: return side ? g * (a > 0 ? 0.0 : a) : g * (a > 0 ? 1.0 : b); /* a = x, b = gamma */
  }
  return NAN;
}

/* Three arrays aligned to the iteration shape `dim` (the result's, or the
 * head gradient's): k = 0 that array, 1 lhs, 2 rhs.  Broadcast axes have
 * stride 0.  Small enough to pass to a kernel by value. */
struct bcast {
  int nd;
  int64_t dim[MXR_MAX_NDIM];
  int64_t sdim[3][MXR_MAX_NDIM];
  int64_t stride[3][MXR_MAX_NDIM];
};

#endif /* MXR_OP_ELEMWISE_FN_H */
