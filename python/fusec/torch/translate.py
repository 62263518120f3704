"""One region of an FX graph (aten ops, in topological order) written as one
fz program.

Each node becomes one binding named after it (`mul_3 = arg0_1 * arg0_1`), so
the program reads like the graph it came from and explain() can put the two
side by side; fusec's own CSE and fusion make the bindings free. Views and
identities bind nothing: they give the node the operand's value with
another PyTorch shape (see fz.py for the two shapes a value carries).

Inputs are the region's operands that come from outside it: tensors, and
the SymInt/SymFloat sizes of dynamic shapes as scalars. Their fz dims are
fresh `Dim`s, unified where a broadcast meets two of them, and named D0, D1,
... at the end, so a program's text does not depend on the sizes it was
traced with and one compiled program serves every size. A dim that PyTorch
holds at stride 0 (an expand) is declared as 1 and the input passed as its
one slice, so broadcasts are not copied. Outputs are the nodes used outside
the region; each says how to turn fz's tensor back into PyTorch's shape.

Dtypes follow PyTorch: each elementwise op casts its operands where fz's
promotion would differ from PyTorch's (computed by torch's own
`elementwise_dtypes`) and its result where fz's dtype would differ from the
node's. Half types then compute in f32 between stores, as Inductor does.
"""

import sympy
import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND as KIND
from torch._prims_common import elementwise_dtypes

from .fz import RESERVED, Dim, Unsupported, Val, fz_dtype, literal, natural, promote, shape_keys, size_key

__all__ = ["Translator", "NodeUnsupported", "InputSpec", "OutputSpec", "KIND", "align"]

_HALF = (torch.float16, torch.bfloat16)


class NodeUnsupported(Exception):
    """Translation of `node` failed for `reason`: the partitioner leaves the
    node to PyTorch and tries again."""

    def __init__(self, node, reason):
        super().__init__(f"{node.name}: {reason}")
        self.node, self.reason = node, reason


class InputSpec:
    """How one argument of the region call becomes an fz input: `kind` is
    "tensor", "reshape1" (a 0-dim device tensor, read as [1]), "item" (a
    0-dim CPU tensor, which PyTorch lets meet device tensors: its value, a
    scalar), "scalar" (a SymInt or SymFloat, passed by value) or "size" (the
    size of dim `index` of the tensor `node`, for a formula that needs a
    row's length). A tensor's `index`, if any, picks the one slice of its
    stride-0 dims (fz broadcasts it instead); `copy` says it is not dense
    and is copied first (fz reads dense row-major tensors)."""

    __slots__ = ("node", "name", "kind", "index", "copy", "torch")

    def __init__(self, node, name, kind, index=None, copy=False, torch_shape=()):
        self.node, self.name, self.kind = node, name, kind
        self.index, self.copy, self.torch = index, copy, torch_shape


class OutputSpec:
    """One node the region gives back: fz output `index`, and `shape`, how
    PyTorch's shape is computed from it at run time (None when fz's shape is
    PyTorch's): a list with, per dim, ("int", n), ("out", i) (dim i of the fz
    output) or ("arg", j, q) (dim q of the region's argument j); `expand` when
    the tensor is a broadcast of the fz output along dims it lacks."""

    __slots__ = ("node", "index", "shape", "aligned", "expand")

    def __init__(self, node, index, shape=None, aligned=None, expand=False):
        self.node, self.index, self.shape, self.aligned, self.expand = node, index, shape, aligned, expand


def align(shape, k, torch_shape):
    """Which fz dim gives each PyTorch dim (its index, or None for a 1 or a
    broadcast), with `shape` less k trailing 1s aligned from the right; None
    when the invariant of fz.py does not hold."""
    eff = shape[:len(shape) - k]
    off = len(torch_shape) - len(eff)
    m = [None] * len(torch_shape)
    for i, d in enumerate(eff):
        if d == 1:
            continue
        p = off + i
        if p < 0 or d.key != torch_shape[p]:
            return None
        m[p] = i
    return m


def meta(x):
    """PyTorch's value of an argument: the fake tensor or SymInt of a node,
    or the Python number itself."""
    return x.meta["val"] if isinstance(x, torch.fx.Node) else x


class Translator:
    """Translates `nodes` (a region, in topological order); `features` is the
    set of fz 1.1 features the linked libfusec has ("tan", "bitwise", ...)."""

    def __init__(self, nodes, features=frozenset()):
        from .lowering import lower  # the op table, which calls back into this class
        self._lower = lower
        self.nodes, self.members, self.features = list(nodes), set(nodes), features
        self.vals = {}
        self.inputs, self._input_vals = [], {}
        self.stmts = []
        self.outputs, self._out_names = [], []
        self._used = set(RESERVED)

    # ---- the whole region -------------------------------------------------

    EMPTY = "computes nothing (only views and constants)"

    def lower_only(self):
        """Lower every node, without deciding the outputs."""
        for n in self.nodes:
            try:
                self.vals[n] = self._lower(self, n)
            except Unsupported as e:
                raise NodeUnsupported(n, str(e)) from None

    def translate(self):
        """The region's fz source; NodeUnsupported names the first node it
        cannot translate (with reason EMPTY for a region of views only)."""
        self.lower_only()
        if not self.stmts:
            raise NodeUnsupported(self.nodes[-1], self.EMPTY)
        for n in self.nodes:
            if any(u not in self.members for u in n.users):
                try:
                    self._output(n)
                except Unsupported as e:
                    raise NodeUnsupported(n, str(e)) from None
        if not self.outputs:
            raise NodeUnsupported(self.nodes[-1], self.EMPTY)
        tensors = [s for s in self.inputs if s.kind in ("tensor", "reshape1")]
        if not tensors:
            raise NodeUnsupported(self.outputs[0].node, "computes from no tensor input (constants stay in PyTorch)")
        device = tensors[0].node.meta["val"].device
        # The CUDA device the region runs on; None: the CPU reference.
        self.cuda_device = (device.index or 0) if device.type == "cuda" else None
        return self.source()

    def source(self):
        """The fz program: inputs, one binding per node, outputs."""
        names = {}
        for spec in self.inputs:
            if spec.kind == "size":
                continue
            for d in self._input_vals[spec.node].shape:
                if d != 1 and d.find() not in names:
                    names[d.find()] = f"D{len(names)}"
        lines = []
        for spec in self.inputs:
            if spec.kind == "size":
                lines.append(f"in {spec.name}: i64")
                continue
            v = self._input_vals[spec.node]
            dims = ", ".join("1" if d == 1 else names[d.find()] for d in v.shape)
            lines.append(f"in {spec.name}: {fz_dtype(v.dtype)}" + (f"[{dims}]" if dims else ""))
        lines += [f"{name} = {expr}" for name, expr in self.stmts]
        lines += [f"out {name}" for name in self._out_names]
        return "\n".join(lines) + "\n"

    # ---- operands ------------------------------------------------------------

    def arg(self, x):
        """The value of an argument: a node of the region, an input, or a
        Python number (a weak literal, as PyTorch treats Python scalars)."""
        if isinstance(x, torch.fx.Node):
            if x in self.members:
                v = self.vals[x]
                if isinstance(v, tuple):
                    raise Unsupported(f"uses the tuple {x.name} as a tensor")
                return v
            return self._input(x)
        if isinstance(x, bool):
            return Val(literal(x), torch.bool, source="const")
        if isinstance(x, (int, float)):
            return Val(literal(x), None, weak="float" if isinstance(x, float) else "int", source="const", value=x)
        raise Unsupported(f"argument {x!r} is not a tensor or a number")

    def _input(self, x):
        v = self._input_vals.get(x)
        if v is not None:
            return v
        val = x.meta.get("val")
        name = self._name(x.name)
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            dtype = {torch.SymInt: torch.int64, torch.SymFloat: torch.float64, torch.SymBool: torch.bool}[type(val)]
            spec, v = InputSpec(x, name, "scalar"), Val(name, dtype, source="input")
        elif isinstance(val, torch.Tensor):
            spec, v = self._tensor_input(x, val, name)
        else:
            raise Unsupported(f"input {x.name} is not a tensor")
        self.inputs.append(spec)
        self._input_vals[x] = v
        return v

    def _tensor_input(self, x, val, name):
        fz_dtype(val.dtype)
        if val.device.type not in ("cuda", "cpu"):
            raise Unsupported(f"input {x.name} is on {val.device.type}, not CUDA")
        tshape = shape_keys(val)
        if not tshape and val.device.type == "cpu":
            return InputSpec(x, name, "item"), Val(name, val.dtype, (), 0, (), source="input")
        if not tshape:
            return InputSpec(x, name, "reshape1"), Val(name, val.dtype, (1,), 0, (), source="input")
        strides = [size_key(s) for s in val.stride()]
        shape, index = [], []
        for size, stride in zip(tshape, strides):
            bcast = size != 1 and stride == 0
            shape.append(1 if size == 1 or bcast else Dim(size))
            index.append(slice(0, 1) if bcast else slice(None))
        index = tuple(index) if any(s != slice(None) for s in index) else None
        copy = not _dense(tshape, strides, shape)
        spec = InputSpec(x, name, "tensor", index, copy, tshape)
        return spec, Val(name, val.dtype, shape, 0, tshape, source="input")

    def size(self, key, base):
        """An i64 scalar input holding PyTorch size `key` at run time, taken
        from a tensor input that has it."""
        for spec in list(self.inputs):
            if spec.kind == "tensor" and key in spec.torch:
                name = self._name(base)
                self.inputs.append(InputSpec(spec.node, name, "size", spec.torch.index(key)))
                return Val(name, torch.int64, source="input")
        raise Unsupported("needs a size that no input of the region has")

    def _name(self, base):
        name = base if base.isidentifier() and base.isascii() else "v"
        while name in self._used:
            name += "_"
        self._used.add(name)
        return name

    # ---- results ---------------------------------------------------------------

    def bind(self, node, expr, dtype, shape, k=0):
        """Emit `node = expr` where fz types expr as `dtype`, cast to the
        node's dtype if it differs; returns the node's value."""
        want = node.meta["val"].dtype
        fz_dtype(want)
        if dtype != want:
            expr = f"{fz_dtype(want)}({expr})"
        name = self._name(node.name)
        self.stmts.append((name, expr))
        return Val(name, want, shape, k, shape_keys(node.meta["val"]), source="binding")

    def temp(self, node, what, expr, dtype, like):
        """An intermediate binding (`node_what`) of a formula that needs a
        value twice; shaped like `like`."""
        name = self._name(f"{node.name}_{what}")
        self.stmts.append((name, expr))
        return Val(name, dtype, like.shape, like.k, like.torch, source="binding")

    def cast(self, v, dtype):
        if v.dtype == dtype:
            return v
        return Val(f"{fz_dtype(dtype)}({v.text})", dtype, v.shape, v.k, v.torch, source=v.source)

    def coerce(self, vals, args, kind=KIND.DEFAULT):
        """Cast operands to PyTorch's common dtype for an op on `args` (the
        node's arguments, in the order of `vals`) where fz would not convert
        them the same way by itself. Python numbers stay weak literals; sizes
        (SymInt, SymFloat) convert to the computation dtype, as PyTorch's
        scalars do. Returns the operands and the common dtype."""
        if kind == KIND.ALWAYS_BOOL:
            kind = KIND.DEFAULT  # the operands' common dtype, not the result's
        compute, common = elementwise_dtypes(*[meta(a) for a in args], type_promotion_kind=kind)
        out = []
        for v, a in zip(vals, args):
            if v.weak == "int" and common == torch.int32 and not -2**31 <= v.value < 2**31:
                # PyTorch wraps a Python int into an i32 operation; fz would refuse it.
                wrapped = (v.value + 2**31) % 2**32 - 2**31
                out.append(Val(literal(wrapped), None, weak="int", source="const", value=wrapped))
            elif v.dtype is None or v.dtype == common:
                out.append(v)
            elif isinstance(meta(a), (torch.SymInt, torch.SymFloat, torch.SymBool)):
                out.append(self.cast(v, compute))
            elif promote(v.dtype, common) == common and common not in _HALF:
                out.append(v)
            else:
                out.append(self.cast(v, common))
        nat = natural(out)
        if nat != common and promote(nat, common) == common:
            # fz would compute in a narrower dtype (bool + 1 is i32 in fz, i64
            # in PyTorch): make one operand the common dtype.
            i = next(i for i, v in enumerate(out) if v.dtype is not None)
            out[i] = self.cast(out[i], common)
        return out, common

    # ---- shapes ------------------------------------------------------------------

    def broadcast(self, vals, torch_out):
        """fz's broadcast of `vals`, checked against PyTorch's result shape;
        returns (shape, k). Dims that meet are unified."""
        shaped = [v for v in vals if not v.is_scalar]
        ks = {v.k for v in shaped}
        if len(ks) > 1:
            raise Unsupported("combines a tensor reduced without keepdim with another tensor "
                              "(fz broadcasts from the right)")
        k = ks.pop() if ks else 0
        rank = max((len(v.shape) for v in vals), default=0)
        out = []
        for pos in range(-rank, 0):
            dims = [v.shape[pos] for v in vals if len(v.shape) >= -pos and v.shape[pos] != 1]
            for d in dims[1:]:
                if d.key != dims[0].key:
                    raise Unsupported("broadcasts two different sizes")
                d.union(dims[0])
            out.append(dims[0] if dims else 1)
        if align(out, k, torch_out) is None:
            raise Unsupported("broadcasts differently in fz (which aligns shapes from the right)")
        return tuple(out), k

    def reshape(self, v, torch_out):
        """k for value `v` seen with PyTorch shape `torch_out`, a reshape that
        only adds or drops size-1 dims; the fz value is unchanged, so the
        non-1 dims must keep their place counted from the right."""
        tin = v.torch
        nz_in = [p for p, s in enumerate(tin) if s != 1]
        nz_out = [q for q, s in enumerate(torch_out) if s != 1]
        if [tin[p] for p in nz_in] != [torch_out[q] for q in nz_out]:
            raise Unsupported("reshapes more than size-1 dims (fz has no reshape)")
        m = align(v.shape, v.k, tin)
        want = [None] * len(torch_out)
        for p, q in zip(nz_in, nz_out):
            want[q] = m[p]
        trailing = len(v.shape) - len(_rstrip_ones(v.shape))
        for k in range(trailing + 1):
            if align(v.shape, k, torch_out) == want:
                return k
        raise Unsupported("adds or drops a size-1 dim between others (fz broadcasts from the right)")

    def as_view(self, node, v):
        """The node's value: `v` seen with the node's PyTorch shape. A
        reshape of a region input that fz would see with other trailing 1s
        is better done by PyTorch (a free view), which hands the region a
        tensor of the new shape."""
        tout = shape_keys(node.meta["val"])
        k = self.reshape(v, tout)
        if v.source == "input" and k != v.k:
            raise Unsupported("a reshape of a region input stays a PyTorch view")
        return Val(v.text, v.dtype, v.shape, k, tout, weak=v.weak, source=v.source)

    # ---- outputs --------------------------------------------------------------------

    def _output(self, n):
        v = self.vals[n]
        if isinstance(v, tuple):
            raise Unsupported("its tuple is used outside the region")
        if v.source == "input":
            raise Unsupported("a view of a region input stays in PyTorch")
        if v.source == "const":
            raise Unsupported("a constant used outside the region stays in PyTorch")
        if v.text in self._out_names:
            index = self._out_names.index(v.text)
        else:
            index = len(self._out_names)
            self._out_names.append(v.text)
        self.outputs.append(self._output_spec(n, v, index))

    def _output_spec(self, n, v, index):
        m = align(v.shape, v.k, v.torch)
        exact = v.k == 0 and len(v.shape) == len(v.torch) and all(
            (d == 1) == (s == 1) for d, s in zip(v.shape, v.torch))
        if exact:
            return OutputSpec(n, index)
        shape = [self._size(s, m[p]) for p, s in enumerate(v.torch)]
        expand = any(s != 1 and m[p] is None for p, s in enumerate(v.torch))
        aligned = [m[p] is not None or s == 1 for p, s in enumerate(v.torch)] if expand else None
        return OutputSpec(n, index, shape, aligned, expand)

    def _size(self, key, fz_index):
        """How to know PyTorch size `key` at run time."""
        if isinstance(key, int):
            return ("int", key)
        if fz_index is not None:
            return ("out", fz_index)
        for j, spec in enumerate(self.inputs):
            if key in spec.torch:
                return ("arg", j, spec.torch.index(key))
        raise Unsupported("a broadcast whose size is not known from the region's inputs stays in PyTorch")


def _rstrip_ones(shape):
    shape = list(shape)
    while shape and shape[-1] == 1:
        shape.pop()
    return shape


def _dense(tshape, strides, shape):
    """True when the dims fz reads (not 1 in `shape`) are row-major dense."""
    expect = 1
    for size, stride, d in reversed(list(zip(tshape, strides, shape))):
        if d == 1:
            continue
        if sympy.expand(stride - expect) != 0:
            return False
        expect = expect * size
    return True
