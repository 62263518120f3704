"""Partitioning an FX graph into regions fz can express.

Greedy, in one pass over the nodes in topological order: a node fz can
express joins the regions of its operands, as many of them as it can
without making a cycle (a path from a region out through PyTorch nodes and
back into it, which would leave no order to run the regions in), else
starts one of its own. A region is thus connected, and grows as far as its
nodes allow. Every node remembers the set of regions it depends on, so the
cycle check is a set intersection; region ids are merged with union-find.

`regions()` returns the regions as lists of nodes in graph order; the caller
translates each and, where translation refuses a node (a shape fz cannot
follow), leaves that node out and partitions again.

torch.fx's CapabilityBasedPartitioner does the same job with a different
aim: it tries to merge every partition with every new node (a horizontal
fusion of unrelated regions, with a graph search per try), which is both
slower on training graphs and not what fz wants; regions here merge only
along edges, and siblings only when they read the same tensor.
"""

import operator

__all__ = ["regions", "candidates"]


def candidates(graph, supported):
    """The nodes `supported(node, ok)` accepts, plus getitems of those
    nodes; `ok` holds the candidates among the nodes before `node`."""
    ok = set()
    for n in graph.nodes:
        if n.op != "call_function":
            continue
        if n.target is operator.getitem:
            if n.args[0] in ok:
                ok.add(n)
        elif supported(n, ok):
            ok.add(n)
    return ok


class _Regions:
    def __init__(self):
        self.parent = {}

    def find(self, r):
        while self.parent[r] != r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def new(self):
        r = len(self.parent)
        self.parent[r] = r
        return r

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[b] = a
        return a


def regions(graph, ok):
    """Maximal connected, acyclic groups of the nodes in `ok`."""
    uf = _Regions()
    region = {}      # node -> region id (find() it)
    deps = {}        # node -> region ids it depends on, its own included
    ext = {}         # region id -> region ids its nodes reach through nodes outside it
    for n in graph.nodes:
        ins = n.all_input_nodes
        upstream = set().union(*(deps[i] for i in ins)) if ins else set()
        if n not in ok:
            deps[n] = upstream
            continue
        chosen = []
        for i in ins:
            r = uf.find(region[i]) if i in region else None
            if r is not None and r not in chosen and _can_join(uf, n, ins, region, deps, ext, chosen + [r]):
                chosen.append(r)
        r = uf.new()
        for c in chosen:
            merged = ext.pop(c, set()) | ext.pop(r, set())
            r = uf.union(r, c)
            ext[r] = merged
        outside = set()
        for i in ins:
            if i not in region or uf.find(region[i]) != r:
                outside |= deps[i]
        ext[r] = ext.get(r, set()) | outside
        region[n] = r
        deps[n] = upstream | {r}
    _merge_siblings(graph, uf, region, ext)
    groups = {}
    for n in graph.nodes:
        if n in region:
            groups.setdefault(uf.find(region[n]), []).append(n)
    return list(groups.values())


def _merge_siblings(graph, uf, region, ext):
    """Regions that read the same value become one (fz then reads it once,
    as for softmax(x) beside sum(x)), where neither depends on the other
    through nodes outside them."""
    for n in graph.nodes:
        readers = []
        for u in n.users:
            r = uf.find(region[u]) if u in region else None
            if r is not None and r not in readers and (n not in region or uf.find(region[n]) != r):
                readers.append(r)
        while len(readers) > 1:
            a, b = uf.find(readers[0]), uf.find(readers.pop())
            if a == b:
                continue
            if any(uf.find(d) == b for d in ext.get(a, ())) or any(uf.find(d) == a for d in ext.get(b, ())):
                continue
            merged = ext.pop(a, set()) | ext.pop(b, set())
            ext[uf.union(a, b)] = merged


def _can_join(uf, n, ins, region, deps, ext, chosen):
    """Whether n may join the regions `chosen` (ids, found) without a cycle:
    no operand of n outside them depends on one of them, and none of them
    depends on another through nodes outside."""
    chosen = set(chosen)
    for i in ins:
        if i in region and uf.find(region[i]) in chosen:
            continue
        if any(uf.find(d) in chosen for d in deps[i]):
            return False
    for c in chosen:
        if any(uf.find(d) in chosen - {c} for d in ext.get(c, ())):
            return False
    return True
