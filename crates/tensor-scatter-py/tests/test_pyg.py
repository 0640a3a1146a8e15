"""PyTorch Geometric: our aggregations inside PyG's layers match PyG's own to float tolerance,
give the same bits at 1, 2 and 4 threads, and compile with ``fullgraph=True``."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from torch_geometric.nn import SAGEConv, aggr as pyg_aggr  # noqa: E402

import tensor_scatter as ts  # noqa: E402
from tensor_scatter import pyg  # noqa: E402

F64 = torch.float64
PAIRS = [
    (pyg.SumAggregation, pyg_aggr.SumAggregation),
    (pyg.MeanAggregation, pyg_aggr.MeanAggregation),
    (pyg.MinAggregation, pyg_aggr.MinAggregation),
    (pyg.MaxAggregation, pyg_aggr.MaxAggregation),
    (pyg.SoftmaxAggregation, pyg_aggr.SoftmaxAggregation),
]


def _graph(n=30, e=200, f=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, f, dtype=F64, generator=g)
    edge_index = torch.randint(0, n, (2, e), generator=g)
    return x, edge_index


def _layer(aggr, f=8):
    torch.manual_seed(0)
    return SAGEConv(f, 6, aggr=aggr).to(F64)


@pytest.mark.parametrize("ours,theirs", PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_sageconv_matches_pyg(ours, theirs):
    x, edge_index = _graph()
    a, b = _layer(ours()), _layer(theirs())
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    ya, yb = a(xa, edge_index), b(xb, edge_index)
    torch.testing.assert_close(ya, yb, rtol=1e-12, atol=1e-12)
    ya.pow(2).sum().backward()
    yb.pow(2).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-10, atol=1e-12)
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa.grad, pb.grad, rtol=1e-10, atol=1e-12)


def test_the_same_bits_at_1_2_and_4_threads():
    x, edge_index = _graph(n=2000, e=40000, seed=1)
    runs = []
    for threads in (1, 2, 4):
        ts.set_default_threads(threads)
        try:
            for cls, _ in PAIRS:
                layer = _layer(cls())
                xr = x.clone().requires_grad_()
                y = layer(xr, edge_index)
                y.pow(2).sum().backward()
                runs.append((threads, cls.__name__, y.detach(), xr.grad))
        finally:
            ts.set_default_threads(0)
    by_name = {}
    for threads, name, y, g in runs:
        if name in by_name:
            assert torch.equal(y, by_name[name][0]) and torch.equal(g, by_name[name][1]), name
        else:
            by_name[name] = (y, g)


def test_sageconv_compiles_with_fullgraph():
    torch._dynamo.reset()
    x, edge_index = _graph()
    for cls in (pyg.MeanAggregation, pyg.SoftmaxAggregation):
        layer = _layer(cls())
        compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
        assert torch.equal(compiled(x, edge_index), layer(x, edge_index)), cls.__name__


def test_learned_temperature_and_ptr():
    x, edge_index = _graph()
    messages = x[edge_index[0]]
    soft = pyg.SoftmaxAggregation(t=0.5, learn=True)
    out = soft(messages, edge_index[1], dim_size=30)
    out.sum().backward()
    assert soft.t.grad is not None
    theirs = pyg_aggr.SoftmaxAggregation(t=0.5, learn=True)
    torch.testing.assert_close(out, theirs(messages, edge_index[1], dim_size=30))
    # Sorted rows by offsets: the segment reductions.
    index = torch.tensor([0, 0, 1, 3, 3, 3])
    ptr = torch.tensor([0, 2, 3, 3, 6])
    v = torch.randn(6, 4, dtype=F64)
    for ours, theirs in PAIRS[:4]:
        torch.testing.assert_close(ours()(v, ptr=ptr), theirs()(v, index, dim_size=4))
