# The networks of the benchmark-score suite (docs/networks.md): netgen.py
# writes each as MXNet symbol JSON and seeded .params weights into
# harness/networks/ of the build tree, where mxcts-probe's
# network_inference workload looks by default ("networks" beside the
# probe).  Included from the top Makefile.am.  `make check` builds the
# suite's default network; `make networks` every network at its
# benchmark_score image size (about 1.1 GB).

PYTHON3 = python3
NETGEN = $(top_srcdir)/harness/networks/netgen.py
NETWORK_NAMES = alexnet vgg-16 inception-bn inception-v3 resnet-50 resnet-152
EXTRA_DIST += harness/networks/netgen.py harness/networks/benchmark_table.py \
	harness/networks/reference harness/networks/test_networks.sh

# netgen.py and the workload's errors, on a small network (about 5 s).
TESTS += harness/networks/test_networks.sh

# NET-IMAGE.stamp: both files of NET at IMAGE.
harness/networks/%.stamp: $(NETGEN)
	@$(MKDIR_P) harness/networks
	$(AM_V_GEN)$(PYTHON3) $(NETGEN) --net $(shell echo $* | sed 's/-[0-9]*$$//') \
	  --image $(shell echo $* | sed 's/.*-//') --out harness/networks && touch $@

# The reference outputs the suite compares with, copied beside the networks.
harness/networks/%.json: $(top_srcdir)/harness/networks/reference/%.json
	@$(MKDIR_P) harness/networks
	$(AM_V_GEN)cp "$<" "$@"

# Built by `make`, not only by `make check`: the benchmark-score suite reads
# them, and the README's first command runs the suites after a plain `make`.
noinst_DATA = harness/networks/resnet-50-32.stamp harness/networks/mxnet-1.9.1-resnet-50-32.json

networks: harness/networks/alexnet-224.stamp harness/networks/vgg-16-224.stamp \
	harness/networks/inception-bn-224.stamp harness/networks/inception-v3-299.stamp \
	harness/networks/resnet-50-224.stamp harness/networks/resnet-152-224.stamp

clean-local: clean-networks
clean-networks:
	-rm -f harness/networks/*.stamp harness/networks/*-symbol.json harness/networks/*.params \
	  harness/networks/mxnet-*.json

.PHONY: networks clean-networks
