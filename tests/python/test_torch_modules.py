"""Real modules under backend="fusec": a GPT-2 style MLP block (LayerNorm,
Linear with bias, tanh GELU, residual), a LLaMA style block in bf16 (RMSNorm
and SwiGLU), attention scores with a causal mask and softmax (the matmuls
stay in PyTorch), and a training step of a small model whose loss and
gradients match eager. Each checks the result against eager, the regions
and kernels it becomes, and which nodes stay in PyTorch. On the CPU at
small sizes (CPU reference), on the GPU at model sizes.

Run as a script (python tests/python/test_torch_modules.py) it prints the
nodes left to PyTorch, counted by reason, for docs/python.md."""

import collections
import copy
import math

import pytest

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional

import fusec.torch  # noqa: E402
from test_torch_ops import assert_close  # noqa: E402


class GPT2MLP(nn.Module):
    """Pre-LayerNorm MLP block: x + proj(gelu_tanh(fc(ln(x))))."""

    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.proj(F.gelu(self.fc(self.ln(x)), approximate="tanh"))


class LlamaRMSNorm(nn.Module):
    """As in LLaMA: normalised in f32, weighted in the model's dtype."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


class LlamaMLP(nn.Module):
    """x + down(silu(gate(norm(x))) * up(norm(x)))."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm = LlamaRMSNorm(d)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def attention(q, k, v):
    """Causal attention with the scores written out: matmul, scale, mask,
    softmax, matmul."""
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class TinyLM(nn.Module):
    """Input projection, a GPT-2 MLP block, LayerNorm and a head."""

    def __init__(self, d, vocab):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.block = GPT2MLP(d)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, x):
        return self.head(self.ln(self.block(self.inp(x))))


def train_step(model, x, target):
    loss = F.cross_entropy(model(x).flatten(0, 1), target.flatten())
    loss.backward()
    return loss


SIZES = {"cpu": dict(batch=2, seq=8, d=32, heads=2, vocab=50),
         "cuda": dict(batch=4, seq=256, d=768, heads=12, vocab=1000)}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def make(name, device):
    """(fn, args, row length) of module test `name`, its parameters seeded."""
    s = SIZES[device]
    torch.manual_seed(0)
    x = torch.randn(s["batch"], s["seq"], s["d"], generator=gen(1)).to(device)
    if name == "gpt2_mlp":
        m = GPT2MLP(s["d"]).to(device)
        return m, [x], s["d"] * 4
    if name == "llama_mlp_bf16":
        m = LlamaMLP(s["d"], s["d"] * 8 // 3).to(device=device, dtype=torch.bfloat16)
        with torch.no_grad():
            m.norm.weight.copy_(torch.rand(s["d"], generator=gen(2)) + 0.5)
        return m, [x.bfloat16()], s["d"] * 8 // 3
    if name == "attention":
        q, k, v = (torch.randn(s["batch"], s["heads"], s["seq"], s["d"] // s["heads"], generator=gen(i)).to(device)
                   for i in (3, 4, 5))
        return attention, [q, k, v], s["seq"]
    raise KeyError(name)


# name -> ((regions, kernels), {op left to PyTorch: how many})
EXPECTED = {
    "gpt2_mlp": ((3, 3), {"aten.addmm.default": 2, "aten.permute.default": 2, "aten.view.default": 4}),
    "llama_mlp_bf16": ((3, 3), {"aten.mm.default": 3, "aten.permute.default": 3, "aten.view.default": 6}),
    # the causal mask's arange (tril's decomposition) stays; its compare joins the softmax
    "attention": ((1, 1), {"aten.arange.start_step": 2, "aten.bmm.default": 2, "aten.expand.default": 3,
                           "aten.permute.default": 1, "aten.unsqueeze.default": 1, "aten.view.default": 6}),
}
TRAINING = {
    "forward": ((6, 6), {"aten.addmm.default": 4, "aten.gather.default": 1, "aten.permute.default": 4,
                         "aten.squeeze.dims": 1, "aten.unsqueeze.default": 1, "aten.view.default": 10}),
    "backward": ((6, 6), {"aten.full_like.default": 1, "aten.mm.default": 7, "aten.permute.default": 18,
                          "aten.scatter.value": 1, "aten.sum.dim_IntList": 8, "aten.unsqueeze.default": 1,
                          "aten.view.default": 17}),
}


def check_graph(report, expected):
    (regions, kernels), ops = expected
    assert (len(report.regions), report.kernels) == (regions, kernels), str(report)
    assert collections.Counter(f.op for f in report.fallbacks) == ops, str(report)


def run_module(name, device):
    fn, args, row = make(name, device)
    with torch.no_grad():
        want = fn(*args)
        report = fusec.torch.explain(fn, *args, quiet=True)
    assert_close(report.result, want, row=row)
    check_graph(report, EXPECTED[name])
    return report


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_module_cpu(name):
    run_module(name, "cpu")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_module_gpu(name, cuda):
    run_module(name, "cuda")


def run_training(device):
    s = SIZES[device]
    model = TinyLM(s["d"], s["vocab"]).to(device)
    ref = copy.deepcopy(model)
    x = torch.randn(s["batch"], s["seq"], s["d"], generator=gen(6)).to(device)
    target = torch.randint(0, s["vocab"], (s["batch"], s["seq"]), generator=gen(7)).to(device)
    report = fusec.torch.explain(train_step, model, x, target, quiet=True)
    want = train_step(ref, x, target)
    assert_close(report.result, want, row=s["vocab"])
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        assert p.grad is not None, name
        assert_close(p.grad, q.grad, row=s["batch"] * s["seq"])
    assert [g.kind for g in report.graphs] == ["forward", "backward"], str(report)
    for g in report.graphs:
        check_graph(g, TRAINING[g.kind])
    return report


def test_training_step_cpu():
    run_training("cpu")


def test_training_step_gpu(cuda):
    run_training("cuda")


def reasons(device="cpu"):
    """The nodes the module tests leave to PyTorch, counted by (op, reason)."""
    counts = collections.Counter()
    for name in sorted(EXPECTED):
        counts.update((f.op, f.reason) for f in run_module(name, device).fallbacks)
    counts.update((f.op, f.reason) for f in run_training(device).fallbacks)
    return counts


if __name__ == "__main__":
    for (op, why), n in sorted(reasons().items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| {n} | `{op}` | {why} |")
