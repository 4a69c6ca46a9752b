/*
 * The oracle's description table: the test cases of every op, grouped by
 * op.  Shapes are small so that finite differences stay cheap; fillers keep
 * inputs where the op is defined and smooth (positive for log/sqrt, away
 * from 0 for kinks, distinct values for max pooling, class indices for
 * labels).  Parameter values are exactly representable as float, so
 * MXNet's float parameters and the oracle's doubles agree.
 */
#include "oracle/oracle_internal.h"

#define SH(...) {(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}
#define UNI(lo, hi) {MXCTS_ORACLE_FILL_UNIFORM, lo, hi}
#define AWAY {MXCTS_ORACLE_FILL_AWAY, 0, 0}
#define AWAYR(lo, hi) {MXCTS_ORACLE_FILL_AWAY, lo, hi}
#define POS {MXCTS_ORACLE_FILL_UNIFORM, 0.5, 2.0}
#define LABELS(k) {MXCTS_ORACLE_FILL_INT, 0, k}
#define DIST {MXCTS_ORACLE_FILL_DISTINCT, 0, 0}
#define DFLT {MXCTS_ORACLE_FILL_UNIFORM, 0, 0}
#define FD .grad = MXCTS_ORACLE_GRAD_FD
#define DIRECT .grad = MXCTS_ORACLE_GRAD_DIRECT
#define NOGRAD .grad = MXCTS_ORACLE_GRAD_NONE, .grad_inputs = 0
#define GI(n) .grad_inputs = (1u << (n)) - 1u /* every one of n inputs */
#define IN1(a) .nin = 1, .in_shapes = {SH a}
#define IN2(a, b) .nin = 2, .in_shapes = {SH a, SH b}
#define IN3(a, b, c) .nin = 3, .in_shapes = {SH a, SH b, SH c}
#define IN4(a, b, c, d) .nin = 4, .in_shapes = {SH a, SH b, SH c, SH d}
/* float64 tolerances for ops MXNet computes with float constants or in float */
#define F64_FWD(r, a) .fwd_tol = {{0, 0}, {r, a}}
#define F64_BWD(r, a) .bwd_tol = {{0, 0}, {r, a}}

#define UNARY(OP, NAME, FILL) \
  {.op = OP, .name = NAME, IN1((2, 3, 4)), .in_fill = {FILL}, FD, GI(1)}
#define BINARY(OP, NAME, A, B, FB) \
  {.op = OP, .name = NAME, IN2(A, B), .in_fill = {DFLT, FB}, FD, GI(2)}
#define SCALAR(OP, S, FILL) \
  {.op = OP, .name = "scalar_" S, .params = {{"scalar", S}}, IN1((3, 4)), .in_fill = {FILL}, FD, GI(1)}

const struct mxcts_oracle_case mxcts__oracle_cases[] = {
    /* ---------------------------------------------------------- basic */
    {.op = "reverse", .name = "axis0_len10", .params = {{"axis", "0"}}, IN1((10)), FD, GI(1)},
    {.op = "reverse", .name = "axes_0_2", .params = {{"axis", "(0,2)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "_copy", .name = "3x4", IN1((3, 4)), FD, GI(1)},
    {.op = "_zeros", .name = "shape_2x3", .params = {{"shape", "(2,3)"}}, .nin = 0, NOGRAD},
    {.op = "_ones", .name = "shape_2x3", .params = {{"shape", "(2,3)"}}, .nin = 0, NOGRAD},
    {.op = "zeros_like", .name = "3x4", IN1((3, 4)), NOGRAD},
    {.op = "ones_like", .name = "3x4", IN1((3, 4)), NOGRAD},
    {.op = "add_n", .name = "three", .params = {{"num_args", "3"}}, IN3((3, 4), (3, 4), (3, 4)), FD, GI(3)},
    {.op = "add_n", .name = "one", .params = {{"num_args", "1"}}, IN1((5)), FD, GI(1)},

    /* ---------------------------------------------------------- arithmetic */
    BINARY("elemwise_add", "3x4", (3, 4), (3, 4), DFLT),
    BINARY("elemwise_sub", "3x4", (3, 4), (3, 4), DFLT),
    BINARY("elemwise_mul", "3x4", (3, 4), (3, 4), DFLT),
    BINARY("elemwise_div", "3x4", (3, 4), (3, 4), AWAYR(0.5, 1.5)),
    SCALAR("_plus_scalar", "1.5", DFLT),
    SCALAR("_minus_scalar", "0.75", DFLT),
    SCALAR("_rminus_scalar", "2", DFLT),
    SCALAR("_mul_scalar", "-1.5", DFLT),
    SCALAR("_div_scalar", "4", DFLT),
    SCALAR("_rdiv_scalar", "2", AWAYR(0.5, 1.5)),
    BINARY("broadcast_add", "middle_axis", (2, 3, 4), (1, 3, 1), DFLT),
    BINARY("broadcast_add", "both_stretch", (3, 1), (1, 4), DFLT),
    BINARY("broadcast_sub", "fewer_dims", (2, 3, 4), (4), DFLT),
    BINARY("broadcast_sub", "lhs_stretch", (2, 1, 4), (3, 1), DFLT),
    BINARY("broadcast_mul", "outer_axis", (2, 3, 4), (2, 1, 4), DFLT),
    BINARY("broadcast_mul", "same_shape", (3, 4), (3, 4), DFLT),
    BINARY("broadcast_div", "column", (2, 3, 4), (3, 1), AWAYR(0.5, 1.5)),
    UNARY("negative", "2x3x4", DFLT),
    UNARY("exp", "2x3x4", UNI(-2, 2)),
    UNARY("log", "positive", POS),
    UNARY("sqrt", "positive", POS),
    UNARY("square", "2x3x4", DFLT),
    UNARY("relu", "away_from_0", AWAY),
    UNARY("sigmoid", "2x3x4", UNI(-3, 3)),
    UNARY("tanh", "2x3x4", UNI(-2, 2)),

    /* ---------------------------------------------------------- activations */
    {.op = "Activation", .name = "relu", .params = {{"act_type", "relu"}}, IN1((3, 4)), .in_fill = {AWAY}, FD, GI(1)},
    {.op = "Activation", .name = "sigmoid", .params = {{"act_type", "sigmoid"}}, IN1((3, 4)), .in_fill = {UNI(-3, 3)}, FD, GI(1)},
    {.op = "Activation", .name = "tanh", .params = {{"act_type", "tanh"}}, IN1((3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},
    {.op = "Activation", .name = "softrelu", .params = {{"act_type", "softrelu"}}, IN1((3, 4)), .in_fill = {UNI(-3, 3)}, FD, GI(1)},
    {.op = "Activation", .name = "softsign", .params = {{"act_type", "softsign"}}, IN1((3, 4)), .in_fill = {AWAY}, FD, GI(1)},
    /* MXNet's xelu multiplies x and the slope (or gamma) as floats whatever the dtype */
    {.op = "LeakyReLU", .name = "leaky_default_slope", IN1((3, 4)), .in_fill = {AWAY}, FD, GI(1), F64_FWD(1e-6, 1e-9)},
    {.op = "LeakyReLU", .name = "leaky", .params = {{"act_type", "leaky"}, {"slope", "0.125"}}, IN1((2, 3, 4)),
     .in_fill = {AWAY}, FD, GI(1), F64_FWD(1e-6, 1e-9)},
    {.op = "LeakyReLU", .name = "elu", .params = {{"act_type", "elu"}, {"slope", "0.5"}}, IN1((3, 4)), .in_fill = {AWAY}, FD, GI(1)},
    /* MXNet's selu constants may be float: 1e-7 relative in float64 */
    {.op = "LeakyReLU", .name = "selu", .params = {{"act_type", "selu"}}, IN1((3, 4)), .in_fill = {AWAY}, DIRECT, GI(1),
     F64_FWD(1e-7, 1e-9), F64_BWD(1e-6, 1e-8)},
    /* MXNet computes gelu in float whatever the dtype */
    {.op = "LeakyReLU", .name = "gelu", .params = {{"act_type", "gelu"}}, IN1((3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1),
     F64_FWD(1e-6, 1e-7), F64_BWD(1e-5, 1e-6)},
    {.op = "LeakyReLU", .name = "prelu_channels", .params = {{"act_type", "prelu"}}, IN2((2, 3, 4), (3)),
     .in_fill = {AWAY, UNI(0.1, 0.5)}, FD, GI(2), F64_FWD(1e-6, 1e-9)},
    {.op = "LeakyReLU", .name = "prelu_one_gamma", .params = {{"act_type", "prelu"}}, IN2((4, 3), (1)),
     .in_fill = {AWAY, UNI(0.1, 0.5)}, FD, GI(2), F64_FWD(1e-6, 1e-9)},
    /* clip's bounds are floats: float(0.7) is what float64 data meets */
    {.op = "clip", .name = "both_bounds", .params = {{"a_min", "-0.5"}, {"a_max", "0.5"}}, IN1((3, 4)), DIRECT, GI(1)},
    {.op = "clip", .name = "float_bounds", .params = {{"a_min", "-0.3"}, {"a_max", "0.7"}}, IN1((2, 3, 4)),
     .in_fill = {UNI(-1.5, 1.5)}, DIRECT, GI(1)},
    {.op = "clip", .name = "at_the_bound", .params = {{"a_min", "-0.5"}, {"a_max", "0.5"}}, IN1((2, 3)),
     .in_fill = {{MXCTS_ORACLE_FILL_CONST, 0.5, 0.5}}, DIRECT, GI(1)},
    {.op = "clip", .name = "crossed_bounds", .params = {{"a_min", "0.5"}, {"a_max", "-0.5"}}, IN1((3, 4)), DIRECT, GI(1)},

    /* ---------------------------------------------------------- Cast (forward only; exact) */
    {.op = "Cast", .name = "to_int8", .params = {{"dtype", "int8"}}, IN1((3, 4)), .in_fill = {UNI(-100, 100)}, NOGRAD,
     .exact = true},
    {.op = "Cast", .name = "to_uint8", .params = {{"dtype", "uint8"}}, IN1((3, 4)), .in_fill = {UNI(-0.875, 250)},
     NOGRAD, .exact = true},
    {.op = "Cast", .name = "to_int32", .params = {{"dtype", "int32"}}, IN1((3, 4)), .in_fill = {UNI(-1e5, 1e5)},
     NOGRAD, .exact = true},
    {.op = "Cast", .name = "to_float32", .params = {{"dtype", "float32"}}, IN1((3, 4)), NOGRAD, .exact = true},

    /* ---------------------------------------------------------- reductions, dot */
    {.op = "sum", .name = "all", IN1((2, 3, 4)), FD, GI(1)},
    {.op = "sum", .name = "axis1", .params = {{"axis", "1"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "sum", .name = "axes02_keepdims", .params = {{"axis", "(0,2)"}, {"keepdims", "True"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "sum", .name = "exclude", .params = {{"axis", "1"}, {"exclude", "True"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "sum", .name = "negative_axis", .params = {{"axis", "-1"}}, IN1((3, 4)), FD, GI(1)},
    {.op = "mean", .name = "all", IN1((2, 3, 4)), FD, GI(1)},
    {.op = "mean", .name = "axis1_keepdims", .params = {{"axis", "1"}, {"keepdims", "True"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "mean", .name = "exclude", .params = {{"axis", "(0,2)"}, {"exclude", "True"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "dot", .name = "matrices", IN2((3, 4), (4, 5)), FD, GI(2)},
    {.op = "dot", .name = "transpose_a", .params = {{"transpose_a", "True"}}, IN2((4, 3), (4, 5)), FD, GI(2)},
    {.op = "dot", .name = "transpose_b", .params = {{"transpose_b", "True"}}, IN2((3, 4), (5, 4)), FD, GI(2)},
    {.op = "dot", .name = "transpose_both", .params = {{"transpose_a", "True"}, {"transpose_b", "True"}},
     IN2((4, 3), (5, 4)), FD, GI(2)},
    {.op = "dot", .name = "vectors", IN2((4), (4)), FD, GI(2)},
    {.op = "dot", .name = "vector_matrix", IN2((4), (4, 3)), FD, GI(2)},
    {.op = "dot", .name = "3d_2d", IN2((2, 3, 4), (4, 5)), FD, GI(2)},

    /* ---------------------------------------------------------- layers */
    {.op = "FullyConnected", .name = "bias", .params = {{"num_hidden", "5"}}, IN3((3, 4), (5, 4), (5)), FD, GI(3)},
    {.op = "FullyConnected", .name = "no_bias", .params = {{"num_hidden", "3"}, {"no_bias", "True"}},
     IN2((4, 2), (3, 2)), FD, GI(2)},
    {.op = "FullyConnected", .name = "flatten", .params = {{"num_hidden", "4"}}, IN3((2, 3, 2), (4, 6), (4)), FD, GI(3)},
    {.op = "FullyConnected", .name = "no_flatten", .params = {{"num_hidden", "4"}, {"flatten", "False"}},
     IN3((2, 3, 5), (4, 5), (4)), FD, GI(3)},
    {.op = "softmax", .name = "last_axis", IN1((2, 3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},
    {.op = "softmax", .name = "axis1", .params = {{"axis", "1"}}, IN1((2, 3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},
    {.op = "softmax", .name = "temperature", .params = {{"temperature", "2"}}, IN1((3, 5)), .in_fill = {UNI(-3, 3)}, FD, GI(1)},
    {.op = "log_softmax", .name = "last_axis", IN1((2, 3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},
    {.op = "log_softmax", .name = "axis0", .params = {{"axis", "0"}}, IN1((3, 4)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},
    {.op = "log_softmax", .name = "temperature", .params = {{"temperature", "0.5"}}, IN1((3, 5)), .in_fill = {UNI(-2, 2)}, FD, GI(1)},

    /* ---------------------------------------------------------- losses (gradients stated) */
    {.op = "SoftmaxOutput", .name = "default", IN2((4, 5), (4)), .in_fill = {UNI(-2, 2), LABELS(5)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "batch_grad_scale", .params = {{"grad_scale", "2"}, {"normalization", "batch"}},
     IN2((4, 5), (4)), .in_fill = {UNI(-2, 2), LABELS(5)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "ignore_valid",
     .params = {{"use_ignore", "True"}, {"ignore_label", "1"}, {"normalization", "valid"}},
     IN2((6, 3), (6)), .in_fill = {UNI(-2, 2), LABELS(3)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "valid_without_use_ignore", .params = {{"ignore_label", "2"}, {"normalization", "valid"}},
     IN2((6, 3), (6)), .in_fill = {UNI(-2, 2), LABELS(3)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "multi_output", .params = {{"multi_output", "True"}},
     IN2((2, 3, 4), (2, 4)), .in_fill = {UNI(-2, 2), LABELS(3)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "multi_output_batch",
     .params = {{"multi_output", "True"}, {"normalization", "batch"}, {"grad_scale", "0.5"}},
     IN2((2, 3, 2, 2), (2, 2, 2)), .in_fill = {UNI(-2, 2), LABELS(3)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "multi_output_ignore_valid",
     .params = {{"multi_output", "True"}, {"use_ignore", "True"}, {"ignore_label", "0"}, {"normalization", "valid"}},
     IN2((2, 3, 4), (2, 4)), .in_fill = {UNI(-2, 2), LABELS(3)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "preserve_shape", .params = {{"preserve_shape", "True"}},
     IN2((2, 3, 4), (2, 3)), .in_fill = {UNI(-2, 2), LABELS(4)}, DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "probability_label", IN2((3, 4), (3, 4)), .in_fill = {UNI(-2, 2), UNI(0, 1)},
     DIRECT, .grad_inputs = 1},
    {.op = "SoftmaxOutput", .name = "smooth_alpha", .params = {{"smooth_alpha", "0.25"}},
     IN2((4, 5), (4)), .in_fill = {UNI(-2, 2), LABELS(5)}, DIRECT, .grad_inputs = 1},
    {.op = "LinearRegressionOutput", .name = "4x3", IN2((4, 3), (4, 3)), DIRECT, .grad_inputs = 1},
    {.op = "LinearRegressionOutput", .name = "column_label_1d", IN2((4, 1), (4)), DIRECT, .grad_inputs = 1},
    {.op = "LinearRegressionOutput", .name = "grad_scale", .params = {{"grad_scale", "2"}}, IN2((4, 2), (4, 2)),
     DIRECT, .grad_inputs = 1},
    {.op = "MAERegressionOutput", .name = "4x3", IN2((4, 3), (4, 3)), DIRECT, .grad_inputs = 1},
    {.op = "LogisticRegressionOutput", .name = "4x3", .params = {{"grad_scale", "0.5"}}, IN2((4, 3), (4, 3)),
     .in_fill = {UNI(-3, 3), UNI(0, 1)}, DIRECT, .grad_inputs = 1},

    /* ---------------------------------------------------------- shapes */
    {.op = "Flatten", .name = "3d", IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Flatten", .name = "4d", IN1((2, 3, 2, 2)), FD, GI(1)},
    {.op = "Reshape", .name = "minus1", .params = {{"shape", "(4,-1)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Reshape", .name = "zero_minus1", .params = {{"shape", "(0,-1)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Reshape", .name = "minus2", .params = {{"shape", "(-2,1)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Reshape", .name = "minus3", .params = {{"shape", "(-3,-2)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Reshape", .name = "minus4", .params = {{"shape", "(-4,1,2,-2)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "Reshape", .name = "reverse", .params = {{"shape", "(-1,0)"}, {"reverse", "True"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "transpose", .name = "default_reverses", IN1((2, 3, 4)), FD, GI(1)},
    {.op = "transpose", .name = "axes102", .params = {{"axes", "(1,0,2)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "transpose", .name = "axes201", .params = {{"axes", "(2,0,1)"}}, IN1((2, 3, 4)), FD, GI(1)},
    {.op = "transpose", .name = "2d", .params = {{"axes", "(1,0)"}}, IN1((3, 4)), FD, GI(1)},
    {.op = "Concat", .name = "dim1", .params = {{"num_args", "2"}}, IN2((2, 3), (2, 4)), FD, GI(2)},
    {.op = "Concat", .name = "dim0_three", .params = {{"num_args", "3"}, {"dim", "0"}}, IN3((1, 3), (2, 3), (3, 3)), FD, GI(3)},
    {.op = "Concat", .name = "negative_dim", .params = {{"num_args", "2"}, {"dim", "-1"}}, IN2((2, 2, 3), (2, 2, 1)), FD, GI(2)},

    /* ---------------------------------------------------------- Dropout */
    {.op = "Dropout", .name = "inference", .params = {{"p", "0.5"}}, IN1((3, 4)), FD, GI(1)},
    {.op = "Dropout", .name = "p0_training", .params = {{"p", "0"}}, IN1((3, 4)), .is_train = true, FD, GI(1)},
    /* random: mxcts_oracle_dropout_check / _dropout_grad, not the oracle */
    {.op = "Dropout", .name = "training", .params = {{"p", "0.5"}}, IN1((20, 50)), .in_fill = {AWAY},
     .is_train = true, .random = true, .grad_inputs = 1},
    {.op = "Dropout", .name = "mode_always", .params = {{"p", "0.25"}, {"mode", "always"}}, IN1((20, 50)),
     .in_fill = {AWAY}, .random = true, .grad_inputs = 1},

    /* ---------------------------------------------------------- Convolution */
    {.op = "Convolution", .name = "3x3", .params = {{"kernel", "(3,3)"}, {"num_filter", "4"}},
     IN3((2, 3, 5, 5), (4, 3, 3, 3), (4)), FD, GI(3)},
    {.op = "Convolution", .name = "stride_pad", .params = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"num_filter", "3"}},
     IN3((1, 2, 5, 5), (3, 2, 3, 3), (3)), FD, GI(3)},
    {.op = "Convolution", .name = "dilate", .params = {{"kernel", "(2,2)"}, {"dilate", "(2,2)"}, {"num_filter", "2"}},
     IN3((1, 2, 5, 5), (2, 2, 2, 2), (2)), FD, GI(3)},
    {.op = "Convolution", .name = "groups", .params = {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", "4"}, {"num_group", "2"}},
     IN3((1, 4, 4, 4), (4, 2, 3, 3), (4)), FD, GI(3)},
    {.op = "Convolution", .name = "no_bias", .params = {{"kernel", "(2,2)"}, {"num_filter", "3"}, {"no_bias", "True"}},
     IN2((2, 2, 4, 4), (3, 2, 2, 2)), FD, GI(2)},
    {.op = "Convolution", .name = "1x1", .params = {{"kernel", "(1,1)"}, {"num_filter", "3"}},
     IN3((2, 4, 3, 3), (3, 4, 1, 1), (3)), FD, GI(3)},
    {.op = "Convolution", .name = "asymmetric", .params = {{"kernel", "(2,3)"}, {"stride", "(1,2)"}, {"pad", "(0,1)"}, {"num_filter", "2"}},
     IN3((1, 2, 4, 5), (2, 2, 2, 3), (2)), FD, GI(3)},
    {.op = "Convolution", .name = "1d", .params = {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"}, {"num_filter", "2"}},
     IN3((2, 3, 7), (2, 3, 3), (2)), FD, GI(3)},
    {.op = "Convolution", .name = "3d", .params = {{"kernel", "(2,2,2)"}, {"num_filter", "2"}},
     IN3((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), (2)), FD, GI(3)},

    /* ---------------------------------------------------------- Pooling */
    {.op = "Pooling", .name = "max_2x2_stride2", .params = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}},
     IN1((2, 2, 4, 4)), .in_fill = {DIST}, FD, GI(1)},
    {.op = "Pooling", .name = "max_3x3_pad", .params = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}},
     IN1((1, 2, 5, 5)), .in_fill = {DIST}, FD, GI(1)},
    {.op = "Pooling", .name = "avg_pad_included", .params = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}},
     IN1((1, 2, 5, 5)), FD, GI(1)},
    {.op = "Pooling", .name = "avg_pad_excluded",
     .params = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}, {"count_include_pad", "False"}},
     IN1((1, 2, 5, 5)), FD, GI(1)},
    {.op = "Pooling", .name = "sum", .params = {{"kernel", "(2,2)"}, {"pool_type", "sum"}}, IN1((1, 2, 3, 3)), FD, GI(1)},
    {.op = "Pooling", .name = "global_max", .params = {{"global_pool", "True"}}, IN1((2, 3, 3, 3)), .in_fill = {DIST}, FD, GI(1)},
    {.op = "Pooling", .name = "global_avg", .params = {{"global_pool", "True"}, {"pool_type", "avg"}}, IN1((2, 3, 3, 3)), FD, GI(1)},
    {.op = "Pooling", .name = "full_max", .params = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}},
     IN1((1, 2, 5, 5)), .in_fill = {DIST}, FD, GI(1)},
    {.op = "Pooling", .name = "full_avg_pad",
     .params = {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", "avg"}, {"pooling_convention", "full"}},
     IN1((1, 1, 6, 6)), FD, GI(1)},
    {.op = "Pooling", .name = "1d_max", .params = {{"kernel", "(3,)"}, {"stride", "(2,)"}}, IN1((2, 2, 7)), .in_fill = {DIST}, FD, GI(1)},
    {.op = "Pooling", .name = "3d_avg", .params = {{"kernel", "(2,2,2)"}, {"pool_type", "avg"}}, IN1((1, 1, 3, 3, 3)), FD, GI(1)},
    {.op = "Pooling", .name = "lp2", .params = {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pool_type", "lp"}, {"p_value", "2"}},
     IN1((1, 2, 4, 4)), .in_fill = {AWAY}, FD, GI(1)},

    /* ---------------------------------------------------------- BatchNorm */
    {.op = "BatchNorm", .name = "training", .params = {{"fix_gamma", "False"}}, IN3((4, 3), (3), (3)),
     .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, .is_train = true, FD, GI(3)},
    {.op = "BatchNorm", .name = "training_fix_gamma", IN3((2, 3, 2, 2), (3), (3)),
     .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, .is_train = true, FD, GI(3)},
    {.op = "BatchNorm", .name = "inference", .params = {{"fix_gamma", "False"}}, IN3((2, 3, 2, 2), (3), (3)),
     .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, FD, GI(3)},
    {.op = "BatchNorm", .name = "use_global_stats", .params = {{"fix_gamma", "False"}, {"use_global_stats", "True"}},
     IN3((4, 3), (3), (3)), .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, .is_train = true, FD, GI(3)},
    {.op = "BatchNorm", .name = "axis_last", .params = {{"fix_gamma", "False"}, {"axis", "-1"}},
     IN3((2, 2, 3), (3), (3)), .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, .is_train = true, FD, GI(3)},
    {.op = "BatchNorm", .name = "momentum_eps", .params = {{"fix_gamma", "False"}, {"momentum", "0.875"}, {"eps", "0.0009765625"}},
     IN3((5, 2), (2), (2)), .in_fill = {DFLT, UNI(0.5, 1.5), DFLT}, .aux_fill = {DFLT, POS}, .is_train = true, FD, GI(3)},

    /* ---------------------------------------------------------- optimizers (no gradient) */
    {.op = "sgd_update", .name = "wd_rescale", .params = {{"lr", "0.125"}, {"wd", "0.0625"}, {"rescale_grad", "0.5"}},
     IN2((3, 4), (3, 4)), NOGRAD},
    {.op = "sgd_update", .name = "clip", .params = {{"lr", "0.25"}, {"wd", "0.125"}, {"rescale_grad", "2"}, {"clip_gradient", "0.5"}},
     IN2((3, 4), (3, 4)), NOGRAD},
    {.op = "sgd_mom_update", .name = "momentum", .params = {{"lr", "0.125"}, {"momentum", "0.875"}, {"wd", "0.0625"}},
     IN3((3, 4), (3, 4), (3, 4)), NOGRAD},
    {.op = "sgd_mom_update", .name = "clip", .params = {{"lr", "0.125"}, {"momentum", "0.5"}, {"rescale_grad", "2"}, {"clip_gradient", "0.5"}},
     IN3((3, 4), (3, 4), (3, 4)), NOGRAD},
    {.op = "adam_update", .name = "defaults", .params = {{"lr", "0.015625"}}, IN4((3, 4), (3, 4), (3, 4), (3, 4)),
     .in_fill = {DFLT, DFLT, DFLT, UNI(0.1, 1)}, NOGRAD},
    {.op = "adam_update", .name = "clip_wd",
     .params = {{"lr", "0.125"}, {"wd", "0.0625"}, {"rescale_grad", "0.5"}, {"clip_gradient", "0.25"},
                {"beta1", "0.875"}, {"beta2", "0.9921875"}, {"epsilon", "0.0009765625"}},
     IN4((3, 4), (3, 4), (3, 4), (3, 4)), .in_fill = {DFLT, DFLT, DFLT, UNI(0.1, 1)}, NOGRAD},
};

const int mxcts__oracle_ncases = (int)(sizeof mxcts__oracle_cases / sizeof mxcts__oracle_cases[0]);
