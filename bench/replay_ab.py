#!/usr/bin/env python3
"""bench/replay_ab.py: fusec builds side by side, timed as the sweep times
them, for the before and after of a code change.

`bench/row_shapes.py` compares binaries through `fusec bench` (events
around each call, buffer sets rotated); the sweep times the program called
from Python, its calls over input copies captured in a CUDA graph and
replayed (run.graph_over_copies, run.replay_us). The two can disagree: a
change of cache hints gained 7% under the first and nothing under the
second, though in two calls, not side by side (docs/performance.md,
"Broadcast chunks, packed and kept"). This tool gives the second for
several libraries at once, in one call.

  PYTHONPATH=python python3 bench/replay_ab.py --lib main=../base/libfusec.so \\
      --lib new=build/libfusec.so [--rounds 2] [--seconds 0.3] KEY [KEY ...]

Each library is loaded by a process of its own (FUSEC_LIBRARY), started
once; the points (sweep keys, as `bench/sweep.py --dry-run` prints them)
go to the processes one at a time, every library in turn, the order
reversed each round, so that a drift of the machine shows in all of them.
Each process builds the point's inputs (seed 0, as the sweep), compiles the
program and times its replays; the first time it meets a point it also
checks the program's outputs against the point's torch function in float64
(the sweep's check, sweep.check_outputs), so
that a variant that is fast and wrong is not mistaken for a gain
(--no-check skips it). Prints a line a point: each library's µs a call in
every round and the ratio of their medians to the first library's, then
"checked" or the failed checks; exits 1 if any failed. Unknown keys are
named before anything starts.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402  (the sweep's CUDA-graph replay)
import sweep  # noqa: E402  (the points, their inputs and programs)


def check(torch, fns, p, prog, inputs):
    """Point p's outputs against its torch function in float64: the errors
    found (none where the family's outputs overflow at p's width)."""
    fam = sweep.family(p["family"], p["dtype"])
    if sweep.overflows(fam, p):
        return []
    outs = sweep.as_tuple(prog(**inputs))
    return sweep.check_outputs(torch, fns[fam["torch"]], inputs, outs, p["dtype"], p["key"])[1]


def child(seconds, checking):
    """Time the points named on stdin, a line each, with this process's
    FUSEC_LIBRARY: a JSON line each on stdout, with the errors of the
    point's check the first time (`bad`; absent when not checked)."""
    import torch
    import torch.nn.functional as F_
    import fusec

    points = {p["key"]: p for p in sweep.plan()}
    fns = sweep.torch_programs(torch, F_) if checking else None
    checked = set()
    for line in sys.stdin:
        key = line.strip()
        p = sweep.point_of_key(key, points)
        inputs, prog = sweep.fusec_point(torch, fusec, p)
        res = {"key": key}
        if checking and key not in checked:
            checked.add(key)
            res["bad"] = check(torch, fns, p, prog, inputs)
        g, sets = run.graph_over_copies(torch, prog, inputs)
        res["us"] = run.replay_us(torch, g, len(sets), seconds, at_least=20)
        print(json.dumps(res), flush=True)
        del g, sets, inputs
        torch.cuda.empty_cache()


def start(lib, seconds, checking, extra=()):
    env = dict(os.environ, FUSEC_LIBRARY=os.path.abspath(lib))
    env.update(extra)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--seconds", str(seconds)]
    return subprocess.Popen(cmd + ([] if checking else ["--no-check"]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)


def ask(proc, name, key):
    """The point's answer from the process of library `name`: its µs a call
    ("us") and, the first time, its failed checks ("bad")."""
    proc.stdin.write(key + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        sys.exit("replay_ab: the process of %s stopped at %s (its error is above)" % (name, key))
    return json.loads(line)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", action="append", default=[], help="LABEL=PATH of a libfusec.so, once per build")
    ap.add_argument("--env", action="append", default=[],
                    help="LABEL:VAR=VALUE, set in that library's process only (a runtime knob "
                         "A/B'd on one library: --lib a=L --lib b=L --env b:VAR=1)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=0.3, help="of replays a point, a library and a round")
    ap.add_argument("--no-check", action="store_true", help="time only: no check of the outputs")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("keys", nargs="*")
    a = ap.parse_args(argv)
    if a.child:
        return child(a.seconds, not a.no_check)
    points = sweep.known_points("replay_ab", a.keys)
    libs = [lib.split("=", 1) for lib in a.lib if "=" in lib]
    bad = [lib for lib in a.lib if "=" not in lib] + [p for _, p in libs if not os.path.isfile(p)]
    if not libs or bad:
        sys.exit("replay_ab: --lib LABEL=PATH of an existing library, at least once (not: %s)" % " ".join(bad))
    envs = {}
    for e in a.env:
        label, _, kv = e.partition(":")
        var, eq, val = kv.partition("=")
        if label not in dict(libs) or not var or not eq:
            sys.exit("replay_ab: --env LABEL:VAR=VALUE with the LABEL of a --lib (not: %s)" % e)
        envs.setdefault(label, {})[var] = val
    procs = [(name, start(path, a.seconds, not a.no_check, envs.get(name, {}))) for name, path in libs]
    print("%-32s %s" % ("point (µs a call, each round)", "  ".join("%-20s" % n for n, _ in procs)), flush=True)
    failed = 0
    try:
        for p in points:
            times = {name: [] for name, _ in procs}
            bad = []
            for r in range(a.rounds):
                for name, proc in (procs if r % 2 == 0 else procs[::-1]):
                    res = ask(proc, name, p["key"])
                    times[name].append(res["us"])
                    bad += ["%s: %s" % (name, e) for e in res.get("bad", [])]
            first = statistics.median(times[procs[0][0]])
            cells = []
            for name, _ in procs:
                med = statistics.median(times[name])
                cells.append("%-20s" % ("%s %s" % (" / ".join("%.1f" % t for t in times[name]),
                                                     "" if name == procs[0][0] else "(%.3fx)" % (med / first))))
            verdict = "" if a.no_check else "  checked" if not bad else "  CHECK FAILED: " + "; ".join(bad)
            failed += bool(bad)
            print(("%-32s %s%s" % (p["key"], "  ".join(cells), verdict)).rstrip(), flush=True)
    finally:
        for _, proc in procs:
            proc.stdin.close()
            proc.wait()
    if failed:
        print("replay_ab: a check failed at %d of %d points" % (failed, len(points)), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
