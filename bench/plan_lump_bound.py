#!/usr/bin/env python3
"""A lower bound, from the lengths alone, on the worst step's max/mean of any plan
whose batches hold at most M padded tokens (M = the budget T) under quadratic cost.

  python3 bench/plan_lump_bound.py LENGTHS_FILE W [T] [a]

Costs are relative to the budget, the cost of one T-token sample (a T + T^2; lengths
are truncated to T). A lump is a sample longer than M/2: alone in its batch. Any other
batch costs at most P, the most that n samples padded to some L <= M/2 with n L <= M can
cost (2 c(M/2) for even M). The q = ceil(t/W) or more
steps that hold the t dearest lumps need, to keep max/mean <= r, a sum of costs of at
least W c_t / r each; their batches are at most the q W dearest lumps and partners of
at most P each. So r >= c_t / (P + mean over the top q W lumps of (c - P)+), for every
t. It ignores padding, which is what makes it weak: any sample of M/2 tokens and any
short one make a partner of cost P."""
import math
import sys


def bound(lengths, W, T, a=2048.0):
    M = T

    def cost(length):
        return a * length + length * length

    budget = cost(T)
    # The dearest batch without a lump: n samples padded to L <= M/2, n <= M // L.
    P = min(budget, max((M // L) * cost(L) for L in range(1, M // 2 + 1))) / budget
    lumps = sorted((cost(min(l, T)) / budget for l in lengths if min(l, T) > M // 2),
                   reverse=True)
    excess = [0.0]
    for c in lumps:
        excess.append(excess[-1] + max(0.0, c - P))
    worst, at = 1.0, None
    for t in range(1, len(lumps) + 1):
        q = math.ceil(t / W)
        k = min(q * W, len(lumps))
        r = lumps[t - 1] / (P + excess[k] / (q * W))
        if r > worst:
            worst, at = r, t
    return worst, at, len(lumps), P


if __name__ == "__main__":
    lengths = [int(x) for x in open(sys.argv[1])]
    W = int(sys.argv[2])
    T = int(sys.argv[3]) if len(sys.argv) > 3 else 8192
    a = float(sys.argv[4]) if len(sys.argv) > 4 else 2048.0
    worst, at, n, P = bound(lengths, W, T, a)
    print(f"{sys.argv[1]}: W={W} T={T} lumps={n} P={P:.3f} "
          f"worst step max/mean >= {worst:.3f} (the step holding lump {at})")
