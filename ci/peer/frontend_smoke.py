"""Smoke test of MXNet's Python frontend paths on whatever library
MXNET_LIBRARY_PATH names (libmxref) or the wheel's own libmxnet.so: NDArrays,
imperative ops, autograd, symbols, executors, Gluon hybridized blocks (cached
ops), the profiler, bulking, and the refusal of an op libmxref does not
implement.  Prints one line per case; exit status 1 when one fails.  Run by
ci/check-peer.sh before the peer files.
"""
import sys

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd, profiler
results = []
def case(fn):
    try:
        fn(); results.append((fn.__name__, 'ok', ''))
    except Exception as e:
        results.append((fn.__name__, 'FAIL', (type(e).__name__ + ': ' + str(e)).splitlines()[0][:300]))
    return fn

@case
def ndarray_basics():
    a = nd.array(np.arange(6).reshape(2,3), dtype='float32')
    assert a.shape == (2,3) and a.dtype == np.float32 and a.context == mx.cpu()
    b = nd.ones((2,3), dtype='float64'); assert b.dtype == np.float64
    assert (a + 1).asnumpy().sum() == 21
    c = a.copy(); assert c.asnumpy().sum() == 15
    d = a.reshape((3,2)); assert d.shape == (3,2)
    e = a[1]; assert e.shape == (3,)
    f = a[0:1]; assert f.shape == (1,3)
    a[:] = 2; assert a.asnumpy().sum() == 12
    g = a.as_in_context(mx.cpu()); nd.waitall()

@case
def imperative_ops():
    x = nd.array([[1,-2],[3,-4]])
    assert nd.relu(x).asnumpy().tolist() == [[1,0],[3,0]]
    y = nd.FullyConnected(x, nd.ones((3,2)), nd.zeros((3,)), num_hidden=3)
    assert y.shape == (2,3)
    assert nd.dot(x, x).shape == (2,2)
    assert nd.softmax(x).shape == (2,2)
    assert nd.sum(x).asscalar() == -2
    assert nd.flip(x, axis=1).asnumpy().tolist() == [[-2,1],[-4,3]]

@case
def autograd_basic():
    x = nd.array([1.,2.,3.]); x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [2,4,6], x.grad.asnumpy()
    assert not autograd.is_recording()
    x.attach_grad(grad_req='add')
    for _ in range(2):
        with autograd.record(): z = (x*2).sum()
        z.backward()
    assert x.grad.asnumpy().tolist() == [4,4,4], x.grad.asnumpy()

@case
def symbol_basic():
    data = mx.sym.var('data')
    fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc')
    out = mx.sym.SoftmaxOutput(fc, name='sm')
    assert out.list_arguments() == ['data','fc_weight','fc_bias','sm_label'], out.list_arguments()
    assert out.list_outputs() == ['sm_output']
    a, o, x = out.infer_shape(data=(2,3))
    assert a == [(2,3),(4,3),(4,),(2,)], a
    js = out.tojson(); s2 = mx.sym.load_json(js); assert s2.list_arguments() == out.list_arguments()
    data._set_attr(foo='bar'); assert data.attr('foo') == 'bar'
    assert fc.name == 'fc'
    g = mx.sym.Group([fc, out]); assert len(g.list_outputs()) == 2

@case
def executor_basic():
    data = mx.sym.var('data'); w = mx.sym.var('w')
    y = mx.sym.FullyConnected(data, w, num_hidden=2, no_bias=True)
    ex = y.bind(mx.cpu(), {'data': nd.ones((1,3)), 'w': nd.ones((2,3))}, args_grad={'data': nd.zeros((1,3)), 'w': nd.zeros((2,3))})
    ex.forward(is_train=True)
    assert ex.outputs[0].asnumpy().tolist() == [[3,3]]
    ex.backward([nd.ones((1,2))])
    assert ex.grad_dict['w'].asnumpy().tolist() == [[1,1,1],[1,1,1]]
    ex2 = y.simple_bind(mx.cpu(), data=(1,3)); ex2.forward(); 

@case
def gluon_hybrid():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(4, activation='relu'), gluon.nn.Dense(2))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.ones((3,5))
    with autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (3,2)
    for p in net.collect_params().values(): assert p.grad().shape == p.shape
    y2 = net(x); assert np.allclose(y.asnumpy(), y2.asnumpy())

@case
def gluon_flip_chain():
    class Flip(gluon.HybridBlock):
        def hybrid_forward(self, F, x): return F.flip(x, axis=0)
    net = gluon.nn.HybridSequential()
    for _ in range(10): net.add(Flip())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.array(np.arange(4)); x.attach_grad()
    with autograd.record(): y = net(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [1,1,1,1]

@case
def profiler_basic():
    import tempfile, os, json
    f = os.path.join(tempfile.mkdtemp(), 'p.json')
    profiler.set_config(profile_all=True, filename=f, aggregate_stats=True)
    profiler.set_state('run'); (nd.ones((2,2))*2).wait_to_read(); profiler.set_state('stop')
    profiler.dump(); json.load(open(f))
    s = profiler.dumps(); assert isinstance(s, str)

@case
def engine_bulk():
    prev = mx.engine.set_bulk_size(10); mx.engine.set_bulk_size(prev)
    with mx.engine.bulk(5): (nd.ones((2,))+1).wait_to_read()

@case
def not_implemented():
    if not hasattr(mx.base._LIB, 'mxr_last_error'):
        return  # MXNet implements every op it lists
    try: nd.sin(nd.ones((2,))); raise AssertionError('no error')
    except mx.base.MXNetError as e: assert 'operator sin is not implemented by libmxref' in str(e), str(e)

for n, st, msg in results: print('%-20s %s %s' % (n, st, msg))
sys.exit(any(st != 'ok' for _, st, _ in results))
