"""Loaded by every Python process of a `make check-peer` run (ci/peer is on
PYTHONPATH), the processes the tests spawn included.  With
MXCTS_PEER_CPU=1 it makes MXNet's GPU context the CPU one
(mxcts_peer.cpu_for_gpu), so that the GPU files' tests, such as the seed's
test_bulking, run on a machine without a GPU while the files stay as they
are.  Otherwise it does nothing.
"""
import os

if os.environ.get("MXCTS_PEER_CPU") == "1":
    import mxcts_peer

    mxcts_peer.cpu_for_gpu()
