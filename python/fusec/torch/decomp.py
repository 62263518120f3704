"""The decompositions AOTAutograd applies before the backend sees a graph.

PyTorch's core ATen table (what its own export path decomposes), plus the
composite ops it keeps whole that are chains of elementwise ops and
last-axis reductions: softmax, log_softmax, layer_norm, gelu, and the
activations with parameters. var_mean stays whole: fz computes it as
mean(x) and mean((x - m)^2) in one pass over the row, while its reference
decomposition goes through prims that fz cannot follow.
"""

import functools

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

__all__ = ["table"]

aten = torch.ops.aten


@functools.lru_cache(maxsize=None)
def table():
    t = dict(core_aten_decompositions())
    t.update(get_decompositions([
        aten.gelu, aten.native_layer_norm, aten._softmax, aten._log_softmax, aten.elu, aten.leaky_relu,
        aten.hardtanh, aten.relu6,
    ]))
    return t
