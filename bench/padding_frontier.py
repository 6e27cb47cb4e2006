#!/usr/bin/env python3
"""The least padding any batching of a corpus can have, against its number of batches.

  python3 bench/padding_frontier.py LENGTHS_FILE [--cost linear|quadratic] [--tokens 8192]
                                    [--a 2048] [--penalty P ...]

A reference for the planner's padding, not a bound on the planner alone: it ignores
balance across ranks and randomness, and asks only how little padding batches within
the budget can have. Lengths longer than --tokens count as --tokens (as with
`evenfeed plan --oversize truncate`). Sorted longest first, the least padding for a
given number of batches is reached by contiguous batches (moving a sample to a batch
with a longer longest pads it more), so a dynamic program over the sorted lengths
finds it. Each --penalty P (padded slots a batch may save to be worth cutting) gives
one point of the trade: with a huge P, the fewest batches; lower P, more batches and
less padding. A batch ends where a run of equal lengths ends or where the budget
stops it, the only places worth ending one."""
import argparse
import bisect


def frontier(lengths, cost, tokens, a, penalty):
    per = (lambda l: a * l + l * l) if cost == "quadratic" else (lambda l: l)
    budget = per(tokens)
    L = sorted((min(l, tokens) for l in lengths), reverse=True)
    n, real = len(L), sum(L)
    run_ends = [i for i in range(1, n + 1) if i == n or L[i] != L[i - 1]]
    best = [float("inf")] * (n + 1)
    count = [0] * (n + 1)
    best[0] = 0
    for j in range(n):
        if best[j] == float("inf"):
            continue
        fits = min(n, j + max(1, int(budget // per(L[j]))))
        k = bisect.bisect_right(run_ends, j)
        ends = []
        while k < len(run_ends) and run_ends[k] < fits:
            ends.append(run_ends[k])
            k += 1
        ends.append(fits)
        for i in ends:
            value = best[j] + (i - j) * L[j] + penalty
            if value < best[i]:
                best[i], count[i] = value, count[j] + 1
    slots = best[n] - penalty * count[n]
    return count[n], 1 - real / slots


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("lengths")
    p.add_argument("--cost", choices=["linear", "quadratic"], default="linear")
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--a", type=float, default=2048)
    p.add_argument("--penalty", type=float, nargs="*", default=[1e12, 3000, 1000, 300])
    args = p.parse_args()
    lengths = [int(x) for x in open(args.lengths) if x.strip()]
    for penalty in args.penalty:
        batches, padding = frontier(lengths, args.cost, args.tokens, args.a, penalty)
        print(f"penalty {penalty:g}: {batches} batches, least padding {100 * padding:.2f}%")


if __name__ == "__main__":
    main()
