#!/usr/bin/env python3
"""How much a plan's imbalance falls when single samples change batch, across steps.

  python3 bench/plan_sample_exchanges.py LENGTHS DUMP --tokens T [--cost quadratic]
      [--cap N] [--padding 0.0195]

A prototype over a `evenfeed plan --dump` (added 2026-12-05, twenty-sixth session): the
planner levels steps by exchanging whole batches (level_by_swaps) and by giving fine
samples of a step's dearest batches to batches of other steps with idle room
(level_by_moves). This tries moving one sample of a step's dearest batch (its longest,
second longest or shortest: any other changes the batch's cost as one of those does) to
any other batch of the epoch, and exchanging it for a shorter one of any other batch,
the move lowering the sum over the two steps touched of max/mean - 1 (plus 10x what
passes 1.10) the most taken first, from the least level steps, until none helps. With
--quicker, only moves that make the two steps' dearest batches cheaper in all, so that
the epoch takes less time. Batches keep the budget and the cap, and the plan's padding
stays under --padding. It prints the plan's mean and p99 of max/mean, padding and
useful share before and after: what such moves could gain, before anyone builds them.
Lengths are cut to the budget, as `--oversize truncate` plans them."""
import argparse
import collections
import json
import math


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("lengths")
    p.add_argument("dump")
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--cost", default="quadratic", choices=["linear", "quadratic"])
    p.add_argument("--cap", type=int, default=1 << 62, help="the plan's sample cap")
    p.add_argument("--padding", type=float, default=0.0195, help="padding share kept under")
    p.add_argument("--quicker", action="store_true",
                   help="take only moves that make the two steps' dearest batches cheaper in all")
    p.add_argument("--verbose", action="store_true", help="print each move")
    a = p.parse_args()
    T = a.tokens
    L = [min(int(x), T) for x in open(a.lengths)]
    f = (lambda l: 2048 * l + l * l) if a.cost == "quadratic" else (lambda l: l)
    budget = f(T)
    raw = collections.defaultdict(list)
    for line in open(a.dump):
        d = json.loads(line)
        raw[(d["epoch"], d["step"])].append(list(d["samples"]))
    W = len(next(iter(raw.values())))

    def head(b):
        return max((L[i] for i in b), default=0)

    def cost(b):
        return len(b) * f(head(b)) if b else 0

    def excess(costs):
        r = max(costs) / (sum(costs) / len(costs))
        return (r - 1) + 10 * max(0.0, r - 1.10)

    def figures(steps):
        v = sorted(max(cost(b) for b in s) / (sum(cost(b) for b in s) / W) for s in steps)
        return sum(v) / len(v), v[min(len(v) - 1, math.ceil(0.99 * len(v)) - 1)]

    def slots_and_tokens(steps):
        return (sum(len(b) * head(b) for s in steps for b in s),
                sum(L[i] for s in steps for b in s for i in b))

    def useful(steps):  # the samples' own cost over W x the sum of each step's dearest
        own = sum(f(L[i]) for s in steps for b in s for i in b)
        return 100 * own / (W * sum(max(cost(b) for b in s) for s in steps))

    def report(label, steps):
        slots, tokens = slots_and_tokens(steps)
        print("%s mean %.4f p99 %.3f padding %.3f%% useful share %.3f%%" % (
            label, *figures(steps), 100 * (1 - tokens / slots), useful(steps)))

    epochs = sorted({k[0] for k in raw})
    by_epoch = {e: [raw[k] for k in sorted(raw) if k[0] == e] for e in epochs}
    flat = [s for e in epochs for s in by_epoch[e]]
    report("before:", flat)
    slots, tokens = slots_and_tokens(flat)
    room = tokens / (1 - a.padding) - slots  # padded slots the moves may add
    for e in epochs:
        room = level_epoch(by_epoch[e], W, L, f, budget, a.cap, room, cost, head, excess,
                           a.verbose, a.quicker)
    report("after: ", flat)


def candidates(batch, L, below=None):
    """Positions worth trying in `batch`: its longest and shortest sample (of those
    shorter than `below`, when given), and the longest after its longest: moving
    another changes the batch's cost no differently from one of these."""
    order = sorted((L[v], k) for k, v in enumerate(batch) if below is None or L[v] < below)
    if not order:
        return []
    picks = {order[0][1], order[-1][1]}
    if len(order) > 1:
        picks.add(order[-2][1])
    return sorted(picks)


def level_epoch(steps, W, L, f, budget, cap, room, cost, head, excess, verbose=False,
                quicker=False):
    """Moves and exchanges samples in one epoch's `steps` (see the module's docstring)
    while one helps; returns the padded slots still free."""
    costs = [[cost(b) for b in s] for s in steps]
    ex = [excess(c) for c in costs]
    places = [(t, j) for t in range(len(steps)) for j in range(W)]
    heads = [[head(b) for b in s] for s in steps]

    def delta(s, i, new_i, t, j, new_j):
        if quicker:  # the two steps' dearest batches must cost less in all
            old_top = max(costs[s]) + (max(costs[t]) if t != s else 0)
            cs = list(costs[s]); cs[i] = new_i
            if s == t:
                cs[j] = new_j
                new_top = max(cs)
            else:
                ct = list(costs[t]); ct[j] = new_j
                new_top = max(cs) + max(ct)
            if new_top >= old_top * (1 - 1e-9):
                return 0
        if s == t:
            c = list(costs[s]); c[i] = new_i; c[j] = new_j
            return excess(c) - ex[s]
        cs = list(costs[s]); cs[i] = new_i
        ct = list(costs[t]); ct[j] = new_j
        return excess(cs) + excess(ct) - ex[s] - ex[t]

    while True:
        best = None
        for s in sorted(range(len(steps)), key=lambda k: -ex[k])[:6]:
            if ex[s] < 0.005:
                break
            top = max(costs[s])
            for i in [k for k in range(W) if costs[s][k] >= top * 0.999]:
                b = steps[s][i]
                for x in candidates(b, L):
                    sample = b[x]
                    rest = b[:x] + b[x + 1:]
                    rest_head = head(rest)
                    rest_cost = len(rest) * f(rest_head)
                    for t, j in places:
                        if (t, j) == (s, i):
                            continue
                        tb = steps[t][j]
                        tb_head = heads[t][j]
                        if rest and len(tb) < cap:
                            h = max(tb_head, L[sample])
                            new = (len(tb) + 1) * f(h)
                            pad = (len(rest) * rest_head + (len(tb) + 1) * h
                                   - len(b) * heads[s][i] - len(tb) * tb_head)
                            if new <= budget and pad <= room:
                                d = delta(s, i, rest_cost, t, j, new)
                                if d < -1e-6 and (best is None or d < best[0]):
                                    best = (d, s, i, x, t, j, None, pad)
                        for y in candidates(tb, L, below=L[sample]):
                            other = tb[y]
                            nb_head = max(L[sample], head(tb[:y] + tb[y + 1:]))
                            nr_head = max(rest_head, L[other])
                            new = len(tb) * f(nb_head)
                            if new > budget:
                                continue
                            pad = (len(b) * nr_head + len(tb) * nb_head
                                   - len(b) * heads[s][i] - len(tb) * tb_head)
                            if pad > room:
                                continue
                            d = delta(s, i, len(b) * f(nr_head), t, j, new)
                            if d < -1e-6 and (best is None or d < best[0]):
                                best = (d, s, i, x, t, j, y, pad)
            if best:
                break
        if not best:
            return room
        _, s, i, x, t, j, y, pad = best
        sample = steps[s][i][x]
        steps[s][i] = steps[s][i][:x] + steps[s][i][x + 1:]
        if y is None:
            steps[t][j] = steps[t][j] + [sample]
        else:
            other = steps[t][j][y]
            steps[t][j] = steps[t][j][:y] + steps[t][j][y + 1:] + [sample]
            steps[s][i].append(other)
        room -= pad
        before = (max(costs[s]) / budget, ex[s], max(costs[t]) / budget, ex[t])
        for k in {s, t}:
            costs[k] = [cost(b) for b in steps[k]]
            heads[k] = [head(b) for b in steps[k]]
            ex[k] = excess(costs[k])
        if verbose:
            print("  step %d (dearest %.4f, excess %.4f) -> step %d (%.4f, %.4f): %s length %d%s; "
                  "now %.4f %.4f, %.4f %.4f" % (s, before[0], before[1], t, before[2], before[3],
                  "moved" if y is None else "swapped", L[sample],
                  "" if y is None else " for %d" % L[other], max(costs[s]) / budget, ex[s],
                  max(costs[t]) / budget, ex[t]))


if __name__ == "__main__":
    main()
