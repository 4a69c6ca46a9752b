# The conformance suites and the expectations of known implementations,
# installed under $(pkgdatadir)/suites where an installed mxcts looks for
# them (docs/suites.md).  Included from the top Makefile.am.  Every file of
# suites/ is listed here; `make check-layout` fails when one is missing.

suitesdir = $(pkgdatadir)/suites
dist_suites_DATA = \
	suites/async.json \
	suites/benchmark-score.json \
	suites/bulking-cachedop.json \
	suites/bulking-imperative.json \
	suites/bulking-inference.json \
	suites/bulking-symbolic.json \
	suites/capi-contract.json \
	suites/engine-dispatch.json \
	suites/engine.json \
	suites/env-defaults.json \
	suites/errors.json \
	suites/gpu-async.json \
	suites/gpu-bulking-cachedop.json \
	suites/gpu-bulking-symbolic.json \
	suites/gpu-cuda-graphs.json \
	suites/gpu-numerics.json \
	suites/gpu-parity.json \
	suites/knobs.json \
	suites/memory-plan.json \
	suites/ndarray-views.json \
	suites/numerics.json \
	suites/profiler.json \
	suites/rejections.json \
	suites/seed-gluon-bulking.json \
	suites/shape-inference.json
# What suites compare with, read by mxcts-probe (harness/probe/local.mk).
suitesdatadir = $(suitesdir)/data
dist_suitesdata_DATA = suites/data/mxnet-1.9.1-op-info.json

# MXNet 1.9.1's op information (docs/c-api.md, "Operator information"): the
# capi-contract suite's reference, libmxref's copy and its list of every
# name, regenerated from the mxnet==1.9.1 wheel in python-env.
EXTRA_DIST += build-aux/mxnet-op-info.py
mxnet-op-info: python-env
	python-env/bin/python $(top_srcdir)/build-aux/mxnet-op-info.py \
	  --json $(top_srcdir)/suites/data/mxnet-1.9.1-op-info.json
	python-env/bin/python $(top_srcdir)/build-aux/mxnet-op-info.py \
	  --header $(top_srcdir)/ref/src/op/mxnet_op_info.h
	python-env/bin/python $(top_srcdir)/build-aux/mxnet-op-info.py \
	  --names $(top_srcdir)/ref/src/op/mxnet_op_names.h
.PHONY: mxnet-op-info

expectationsdir = $(suitesdir)/expectations
dist_expectations_DATA = \
	suites/expectations/libmxref.txt \
	suites/expectations/mxnet-1.4.1.txt \
	suites/expectations/mxnet-1.5.1.txt \
	suites/expectations/mxnet-1.6.0.txt \
	suites/expectations/mxnet-1.7.0.post2.txt \
	suites/expectations/mxnet-1.8.0.post0.txt \
	suites/expectations/mxnet-native-1.8.0.post0.txt \
	suites/expectations/mxnet-1.9.1.txt
