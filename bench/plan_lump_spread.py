#!/usr/bin/env python3
"""What spreading every lump of an epoch evenly over its steps of lumps would give.

  python3 bench/plan_lump_spread.py LENGTHS DUMP --tokens T [--lump 0.667]

A prototype over a `evenfeed plan --dump` under a token bound (added 2026-12-05,
twenty-sixth session; not built). plan_lump_runs (bucketing/lump_runs.h) gives each step
a run of the next dearest lumps (samples alone in a batch, dearer than --lump of the
budget, which no batch of shorter samples reaches under the bound), completed with
partners, and swap_to_level then exchanges single batches. Where the lumps below a
plateau at the budget are sparse (0.67-0.99 of it), the runs leave a step of them at
max/mean 1.10 or more that no single exchange lowers. This takes, per epoch, the steps
that hold lumps, deals all their lumps over lumps/W steps (dearest first, each lump
below the budget to the step with the most room left), and puts their partners in
steps of their own, W at a time, dearest first; every other step is kept. It prints
the plan's mean and p99 of max/mean and its time (the sum of each step's dearest batch,
in budgets) before and after. Only where each epoch's lumps divide by W."""
import argparse
import collections
import json
import math


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("lengths")
    p.add_argument("dump")
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--lump", type=float, default=0.667, help="a lump costs more than this share")
    a = p.parse_args()
    L = [min(int(x), a.tokens) for x in open(a.lengths)]
    f = lambda l: 2048 * l + l * l  # the quadratic model of `evenfeed plan`, a = 2048
    budget = f(a.tokens)
    steps = collections.defaultdict(list)
    for line in open(a.dump):
        d = json.loads(line)
        steps[(d["epoch"], d["step"])].append(d["samples"])
    W = len(next(iter(steps.values())))

    def costs(batches):
        return [len(b) * f(max(L[i] for i in b)) / budget if b else 0 for b in batches]

    def level(c):
        return max(c) / (sum(c) / len(c))

    def is_lump(b):
        return len(b) == 1 and f(L[b[0]]) / budget > a.lump

    before, after, time_before, time_after = [], [], 0.0, 0.0
    for e in sorted({k[0] for k in steps}):
        keys = [k for k in steps if k[0] == e]
        for k in keys:
            before.append(level(costs(steps[k])))
            time_before += max(costs(steps[k]))
        holding = [k for k in keys if any(is_lump(b) for b in steps[k])]
        lumps, partners = [], []
        for k in holding:
            for b, c in zip(steps[k], costs(steps[k])):
                (lumps if is_lump(b) else partners).append(c)
        if len(lumps) % W:
            raise SystemExit("epoch %d: %d lumps do not divide by %d ranks" % (e, len(lumps), W))
        for k in keys:
            if k not in holding:
                after.append(level(costs(steps[k])))
                time_after += max(costs(steps[k]))
        spread = [[] for _ in range(len(lumps) // W)]
        for c in sorted(lumps, reverse=True):
            open_steps = [s for s in spread if len(s) < W]
            if c >= 0.9999:
                target = min(open_steps, key=len)
            else:  # the step whose sum would come nearest W budgets
                target = max(open_steps, key=lambda s: sum(s) + (W - len(s)))
            target.append(c)
        partners.sort(reverse=True)
        for i in range(0, len(partners), W):
            step = partners[i:i + W]
            spread.append(step + [0.0] * (W - len(step)))
        print("epoch %d: %d steps holding %d lumps -> %s" % (
            e, len(holding), len(lumps), " ".join("%.4f" % level(s) for s in spread)))
        for s in spread:
            after.append(level(s))
            time_after += max(s)

    def summary(v, t):
        v = sorted(v)
        return "%d steps, mean %.4f, p99 %.4f, time %.3f budgets" % (
            len(v), sum(v) / len(v), v[min(len(v) - 1, math.ceil(0.99 * len(v)) - 1)], t)

    print("before:", summary(before, time_before))
    print("after: ", summary(after, time_after))


if __name__ == "__main__":
    main()
