#!/usr/bin/env python3
"""Whether a dumped plan's steps would be more level with their batches or samples
regrouped among steps: two estimates behind docs/plan_history.md's thirty-seventh
session, neither built into the planner.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_step_regroup.py FILE plan.jsonl --tokens T [--cost quadratic]
      (--deal-level | --pair-recut) [--cap N]

--deal-level: in each epoch, the steps whose dearest batch is within --within (2%) of
the dearest of a group, taken dearest first, have their batches dealt among themselves,
dearest first, each to the step of least work with a rank free (every step keeps its
width, so each gets one of the group's dearest batches). With the same dearest batch,
the sum of the steps' max/mean is least when their means are equal (1/x is convex);
batches stay whole, so padding and batch mates do not change. A group is dealt where its
worst step is more level after and its sum no greater.

--pair-recut: in each epoch, the steps in order of their dearest batch; each two
neighbours whose dearest batches are within --levels (2.5) times of each other pool
their samples, split them at about --splits (100) points of their length order, and cut
each side into W batches at its least level (plan_step_cuts.least_cut, under the sample
cap --cap when the plan had one): which samples each step holds is chosen again. A split
is kept where the worse of the two steps is no less level and their sum falls; disjoint
pairs are taken best first. Plain length order, not the planner's noisy key: the batch
mates the noise keeps fresh are not counted.

Each prints the plan's imbalance mean and p99 (as `evenfeed plan` reports them) before
and after. Lengths longer than --tokens count as --tokens (--oversize truncate)."""
from plan_dump import (checked_dump_steps, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser)
from plan_dump import ratio as imbalance

TOOL = "plan_step_regroup"


def batch_cost(samples, lengths, f):
    return len(samples) * f(max(lengths[i] for i in samples)) if samples else 0.0


def deal_level(steps, within):
    """`steps` (lists of batch costs) with each group of one dearest level dealt evenly
    where that levels it, as the module's docstring says."""
    order = sorted(range(len(steps)), key=lambda s: -max(steps[s]))
    start = 0
    while start < len(order):
        floor = (1 - within) * max(steps[order[start]])
        end = start + 1
        while end < len(order) and max(steps[order[end]]) >= floor:
            end += 1
        group = order[start:end]
        start = end
        if len(group) < 2:
            continue
        width = len(steps[group[0]])
        dealt = [[] for _ in group]
        for k, cost in enumerate(sorted((c for s in group for c in steps[s]), reverse=True)):
            free = [g for g in range(len(group)) if len(dealt[g]) < width]
            dealt[k if k < len(group) else min(free, key=lambda g: sum(dealt[g]))].append(cost)
        before = [imbalance(steps[s]) for s in group]
        after = [imbalance(d) for d in dealt]
        if max(after) < max(before) - 1e-12 and sum(after) <= sum(before) + 1e-12:
            for s, d in zip(group, dealt):
                steps[s] = d


def cut_at_level(lengths, f, level, cap):
    """Batch costs of `lengths` (longest first) filled while each stays at most `level`
    and holds at most `cap` samples; None when one sample alone is dearer."""
    costs, i = [], 0
    while i < len(lengths):
        count = min(cap, int(level / f(lengths[i]) + 1e-12))
        if count == 0:
            return None
        costs.append(min(count, len(lengths) - i) * f(lengths[i]))
        i += count
    return costs


def least_cut(lengths, f, width, cap):
    """Max/mean of the cut of `lengths` (longest first) into `width` batches at the least
    level that fits them; None when they do not fit under the cap."""
    low, high = f(lengths[0]), f(lengths[0]) * max(1, min(cap, len(lengths)))
    if len(cut_at_level(lengths, f, high, cap)) > width:
        return None
    for _ in range(50):
        middle = (low + high) / 2
        costs = cut_at_level(lengths, f, middle, cap)
        if costs is not None and len(costs) <= width:
            high = middle
        else:
            low = middle
    costs = cut_at_level(lengths, f, high, cap)
    return imbalance(costs + [0.0] * (width - len(costs)))


def best_split(pool, f, width, cap, worse_before, sum_before, splits):
    """The split of `pool` (longest first) into two steps that lowers the sum of their
    max/mean most without making the worse of them less level: (sum, a, b) or None."""
    best = None
    margin = max(1, len(pool) // 10)
    for cut in range(margin, len(pool) - margin, max(1, len(pool) // splits)):
        a, b = least_cut(pool[:cut], f, width, cap), least_cut(pool[cut:], f, width, cap)
        if a is None or b is None or max(a, b) > worse_before + 1e-9:
            continue
        if a + b < sum_before - 1e-9 and (best is None or a + b < best[0]):
            best = (a + b, a, b)
    return best


def pair_recut(samples, costs, lengths, f, args):
    """Imbalances of one epoch's steps after the kept pairwise re-cuts."""
    width = len(costs[0])
    level = [max(c) for c in costs]
    after = [imbalance(c) for c in costs]
    order = sorted(range(len(costs)), key=lambda s: level[s])
    found = []
    for x, y in zip(order, order[1:]):
        if level[x] <= 0 or level[y] > args.levels * level[x]:
            continue
        pool = sorted((lengths[i] for s in (x, y) for b in samples[s] for i in b), reverse=True)
        if len(pool) < 4 or len(pool) > width * args.cap:
            continue
        split = best_split(pool, f, width, args.cap, max(after[x], after[y]), after[x] + after[y],
                           args.splits)
        if split:
            found.append((after[x] + after[y] - split[0], x, y, split[1], split[2]))
    used = set()
    for _, x, y, a, b in sorted(found, reverse=True):
        if x not in used and y not in used:
            used |= {x, y}
            after[y], after[x] = a, b  # the longer samples make the dearer step
    return after


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.add_argument("--deal-level", action="store_true")
    parser.add_argument("--pair-recut", action="store_true")
    parser.add_argument("--within", type=float, default=0.02)
    parser.add_argument("--levels", type=float, default=2.5)
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--cap", type=int, default=0, help="the plan's sample cap (0: none)")
    args = parser.parse_args()
    if args.deal_level == args.pair_recut:
        raise SystemExit(f"{TOOL}: pass one of --deal-level or --pair-recut")
    args.cap = args.cap if args.cap > 0 else 1 << 62
    lengths = lengths_cut_to_budget(args, TOOL)
    f = per_sample_cost(args.cost, args.quadratic_a)
    by_step = checked_dump_steps(args, lengths, f, TOOL)
    before, after = [], []
    for epoch in sorted({e for e, _ in by_step}):
        keys = sorted(k for k in by_step if k[0] == epoch)
        samples = [by_step[k] for k in keys]
        costs = [[batch_cost(b, lengths, f) for b in s] for s in samples]
        before += [imbalance(c) for c in costs]
        if args.deal_level:
            deal_level(costs, args.within)
            after += [imbalance(c) for c in costs]
        else:
            after += pair_recut(samples, costs, lengths, f, args)
    print("before: mean %.4f p99 %.3f" % (sum(before) / len(before), p99(before)))
    print("after:  mean %.4f p99 %.3f" % (sum(after) / len(after), p99(after)))


if __name__ == "__main__":
    main()
