#!/usr/bin/env python3
"""What a corpus's lumps ask of a sample cap, counted from the lengths alone (quadratic
cost). A rough count for the planner's hardest rows, not a bound: it ignores padding,
which can buy partners (see bench/plan_lump_bound.py), and how batches divide.

Costs are in budgets: f(L) / f(T), f(L) = a L + L^2, every length cut to T.
- Singletons: samples costing more than half the budget alone; none shares a batch.
- The awkward band: samples of at most half the budget whose pairs cost under 0.95 of
  it and whose triples cost more than it. They make batches of one or two only.
- Reach: a batch of at most CAP samples costs `level` only if its longest sample has at
  least reach(CAP, level) tokens, whatever else it holds.
- Mass: the summed cost of the samples at least that long.

Then the two-step layout, where there are at most W of each kind: step A holds every
singleton, its other ranks partners cut to the dearest singleton's cost from the
reachable mass; step B holds the awkward band one to a rank, its other ranks partners
cut to the band's dearest. It prints the mass each step needs and the mass left for
it, and each step's max/mean if filled (partners exactly at their level).

    python3 bench/plan_lump_mass.py LENGTHS --tokens T --world-size W --cap C [--cap C2 ...]
"""
import argparse
import sys

from plan_dump import per_sample_cost, read_lengths


def reach(f, cap, level_cost, longest):
    """The least length L with cap x f(L) >= level_cost (longest + 1 when none)."""
    lo, hi = 1, longest + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cap * f(mid) >= level_cost:
            hi = mid
        else:
            lo = mid + 1
    return lo


def is_singleton(cost):
    return cost > 0.5


def is_awkward(cost):
    return cost <= 0.5 and 2 * cost < 0.95 and 3 * cost > 1.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lengths")
    parser.add_argument("--tokens", type=int, required=True, help="--tokens-per-rank")
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--cap", type=int, action="append", required=True, help="sample cap")
    parser.add_argument("--quadratic-a", type=float, default=2048.0)
    args = parser.parse_args()
    try:
        lengths = read_lengths(args.lengths, args.tokens)
    except (OSError, ValueError) as error:
        sys.exit(f"plan_lump_mass: {error}; pass a lengths file, one integer a line")
    f = per_sample_cost("quadratic", args.quadratic_a)
    budget = f(args.tokens)
    costs = [f(n) / budget for n in lengths]
    singletons = [c for c in costs if is_singleton(c)]
    awkward = [c for c in costs if is_awkward(c)]
    print(f"{len(lengths)} samples, {sum(costs):.1f} budgets of cost; {len(singletons)} singletons "
          f"({sum(singletons):.2f}), awkward band {len(awkward)} ({sum(awkward):.2f}, "
          f"{min(awkward, default=0):.3f}-{max(awkward, default=0):.3f})")
    w = args.world_size
    if not singletons or not awkward or len(singletons) > w or len(awkward) > w:
        print(f"the two-step layout does not apply: it needs 1 to {w} singletons and awkward samples")
        return
    level_a, level_b = max(singletons), max(awkward)
    for cap in args.cap:
        def mass_from(level):  # reach, and the mass there of samples of neither fixed kind
            least = reach(f, cap, level * budget, args.tokens)
            return least, sum(c for n, c in zip(lengths, costs)
                              if n >= least and not is_singleton(c) and not is_awkward(c))
        reach_a, free_a = mass_from(level_a)
        reach_b, free_b = mass_from(level_b)
        need_a = (w - len(singletons)) * level_a
        need_b = (w - len(awkward)) * level_b
        got_a = min(need_a, free_a)
        left_b = free_b - got_a  # A's partners come from the longest samples, B's reach too
        got_b = max(0.0, min(need_b, left_b))
        ratio_a = w * level_a / (sum(singletons) + got_a)
        ratio_b = w * level_b / (sum(awkward) + got_b)
        print(f"cap {cap}: A needs {need_a:.1f} from samples >= {reach_a} ({free_a:.1f} there), "
              f"max/mean {ratio_a:.3f}; B needs {need_b:.1f} from samples >= {reach_b} "
              f"({left_b:.1f} left there after A), max/mean {ratio_b:.3f}")


if __name__ == "__main__":
    main()
