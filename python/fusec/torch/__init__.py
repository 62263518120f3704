"""fusec as a torch.compile backend.

    import fusec.torch
    model = torch.compile(model, backend="fusec")

Dynamo captures the model's Python as FX graphs; AOTAutograd lowers each to
aten ops, decomposing softmax, layer_norm, gelu, silu and friends into
primitive ones (decomp.py) and, for training, splitting forward from
backward; each of those graphs is partitioned into regions fz can express,
one fz program per region, and the rest stays PyTorch (graph.py). A region
becomes a call of its fusec Program, which launches on torch's current
stream. Programs are compiled once per source text and process, and their
dims are run-time sizes, so new shapes (dynamic=True, or another batch size)
cost only Dynamo's own recompile.

`explain(fn, *args)` compiles and runs fn once and prints what became of it;
FUSEC_TORCH_LOG=1 (a line per graph) or 2 (everything) logs every graph the
backend compiles. Registered with Dynamo as "fusec" when imported, and
through the `torch_dynamo_backends` entry point when installed.
"""

import functools

import torch

from .report import Report, collect, publish

__all__ = ["backend", "explain", "Report"]


def backend(gm, example_inputs, mode=None, options=None):
    """The Dynamo backend: `torch.compile(fn, backend=fusec.torch.backend)`.
    options: {"fuse": False} compiles each op as its own kernel (as eager);
    {"interpret": False} makes a region's first calls wait for its kernels'
    JIT compile instead of running on fusec's GPU interpreter meanwhile."""
    options = options or {}
    return _aot(bool(options.get("fuse", True)), bool(options.get("interpret", True)))(gm, example_inputs)


@functools.lru_cache(maxsize=None)
def _aot(fuse, interpret=True):
    def compiler(kind):
        def compile_fn(gm, example_inputs):
            return _compile(gm, kind, fuse, interpret)
        return compile_fn
    return _aot_setup(compiler)


def _aot_setup(compiler):
    """AOTAutograd as the backend uses it, `compiler(kind)` compiling each
    graph of that kind ("forward", "backward", "inference"); bench/
    torch_backend.py times it with a compiler that compiles nothing (what
    Dynamo and AOTAutograd cost before fusec does anything)."""
    from functorch.compile import min_cut_rematerialization_partition
    from torch._dynamo.backends.common import aot_autograd

    from .decomp import table
    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"), decompositions=table(),
                        partition_fn=min_cut_rematerialization_partition,
                        keep_inference_input_mutations=True)


def _compile(gm, kind, fuse, interpret):
    from torch._functorch.aot_autograd import make_boxed_func

    from .graph import compile_graph
    from .runtime import features

    compiled, report = compile_graph(gm, kind, features(), fuse, interpret)
    publish(report)
    return make_boxed_func(compiled.forward)


def explain(fn, *args, dynamic=None, options=None, quiet=False, **kwargs):
    """Compile `fn` with the fusec backend, call it once on args, print each
    region (its fz source and kernels) and each node left to PyTorch with the
    reason (unless quiet), and return the Report, whose `result` is what fn
    returned. Resets Dynamo first (torch._dynamo.reset), so that fn is
    compiled anew. `dynamic` and `options` are torch.compile's. A backward
    graph is compiled when backward runs: call it inside fn to see it."""
    torch._dynamo.reset()
    report = Report()
    collect(report)
    try:
        compiled = torch.compile(fn, backend=backend, dynamic=dynamic, options=options)
        report.result = compiled(*args, **kwargs)
    finally:
        from .report import _collectors
        _collectors.remove(report)
    if not quiet:
        print(report)
    return report


def _register():
    from torch._dynamo.backends import registry
    # Installed, Dynamo finds the entry point and registers what it loads;
    # registering here too would be a duplicate.
    if "fusec" not in registry._COMPILER_FNS and registry._BACKENDS.get("fusec") is None:
        registry.register_backend(backend, name="fusec")


_register()
