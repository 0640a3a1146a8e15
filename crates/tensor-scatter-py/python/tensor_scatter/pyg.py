"""PyTorch Geometric aggregations over tensor_scatter: deterministic (the same bits for any
thread count), differentiable, and traced by ``torch.compile`` without a graph break.

``SAGEConv(16, 32, aggr=MeanAggregation())`` (or any layer that takes an ``aggr``) then
aggregates its messages here instead of through PyG's own scatter. Importing this module
imports ``torch_geometric``.

>>> import torch
>>> from tensor_scatter.pyg import MaxAggregation
>>> MaxAggregation()(torch.tensor([[1.0], [5.0], [2.0]]), torch.tensor([0, 0, 1]), dim_size=3)
tensor([[5.],
        [2.],
        [0.]])
"""

from __future__ import annotations

from typing import Optional

import torch
from torch_geometric.nn.aggr import Aggregation

from . import _segment as ts

__all__ = ["SumAggregation", "MeanAggregation", "MinAggregation", "MaxAggregation",
           "SoftmaxAggregation"]


def _reduce(x: torch.Tensor, index: Optional[torch.Tensor], ptr: Optional[torch.Tensor],
            dim_size: Optional[int], dim: int, reduce: str) -> torch.Tensor:
    """``x`` reduced along ``dim`` by ``index`` (a scatter), or by the offsets ``ptr`` when
    there is no index (a segment reduction over sorted rows); empty cells are 0."""
    if index is None:
        if ptr is None:
            raise ValueError(f"{reduce} aggregation: 'index' or 'ptr' must be given")
        d = dim % x.dim()
        return ts.segment_csr(x, ptr.view((1,) * d + (-1,)), reduce=reduce)
    return ts.scatter(x, index, dim, dim_size=dim_size, reduce=reduce)


class SumAggregation(Aggregation):
    """The sum of each set's features (PyG's ``SumAggregation``)."""

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        return _reduce(x, index, ptr, dim_size, dim, "sum")


class MeanAggregation(Aggregation):
    """The mean of each set's features (PyG's ``MeanAggregation``)."""

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        return _reduce(x, index, ptr, dim_size, dim, "mean")


class MinAggregation(Aggregation):
    """The feature-wise minimum of each set (PyG's ``MinAggregation``); its gradient goes to
    the values equal to the minimum, split evenly."""

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        return _reduce(x, index, ptr, dim_size, dim, "min")


class MaxAggregation(Aggregation):
    """The feature-wise maximum of each set (PyG's ``MaxAggregation``)."""

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        return _reduce(x, index, ptr, dim_size, dim, "max")


class SoftmaxAggregation(Aggregation):
    """The softmax-weighted sum of each set, ``sum softmax(t x) * x`` per feature (PyG's
    ``SoftmaxAggregation`` with one temperature ``t``, learned when ``learn``)."""

    def __init__(self, t: float = 1.0, learn: bool = False):
        super().__init__()
        self.learn = learn
        self.t = torch.nn.Parameter(torch.tensor(float(t))) if learn else float(t)

    def forward(self, x, index=None, ptr=None, dim_size=None, dim=-2):
        if index is None:
            raise ValueError("softmax aggregation: 'index' must be given")
        s = x * self.t.to(x.dtype) if self.learn else (x if self.t == 1.0 else x * self.t)
        alpha = ts.scatter_softmax(s, index, dim, dim_size=dim_size)
        return ts.scatter(x * alpha, index, dim, dim_size=dim_size, reduce="sum")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(learn={self.learn})"
