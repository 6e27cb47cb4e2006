#!/usr/bin/env python3
"""Whether some steps of a dumped plan could be more level with the same batches, or
one step with the same samples cut into batches again.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_step_cuts.py FILE plan.jsonl --tokens T [--cost quadratic]
      --epoch E --steps S [S ...] [--recut]

Without --recut: the batches of the given steps of epoch E, as the plan cut them, put in
cost order and taken W at a time (W: the dump's ranks per step). For batches that each
stay whole this is the arrangement with the least time, the sum over steps of each
step's dearest batch (what every rank waits for). Prints each step's max/mean in the
plan and in cost order, and the time of each. Where the plan is as quick and more level
at its worst, moving whole batches between these steps cannot help; only cutting the
batches differently could.

With --recut (one step): the step's samples cut into W batches again, longest first,
each batch n x f(longest), at the least level that fits them in W batches (a bisection
on the level, each batch filled while it stays under it). At a given level this greedy
cut makes the fewest batches of any cut (the longest sample's batch holds at most
level / f(longest) samples, and the next longest lose least by sharing it), so its
least level is the least dearest batch of any cut into W: where that is no cheaper
than the plan's dearest, no cut of the same samples lowers the step's max.

With --epoch-splits (no --steps): the planner's split in cost order
(bucketing/split_in_cost_order.h: two steps whose costs overlap take the dearer and the
cheaper half of their batches, where the worse of the two is no less level and the two
more level together), tried over every pair of steps of each whole epoch, as the planner
cannot: it plans and hands out one window at a time. Prints the plan's imbalance mean
and p99 and its time before and after.

Lengths longer than --tokens count as --tokens (--oversize truncate)."""
import collections

from plan_dump import (checked_dump_batches, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser)
from plan_dump import ratio as imbalance

TOOL = "plan_step_cuts"


def in_cost_order(steps):
    """The steps' batch costs in cost order, dearest first, W at a time."""
    width = len(steps[0])
    pool = sorted((c for step in steps for c in step), reverse=True)
    return [pool[i:i + width] for i in range(0, len(pool), width)]


def cut_at_level(lengths, f, level):
    """Batch costs of `lengths` (in the order given) filled while each stays at most
    `level`; None when one sample alone is dearer."""
    costs, i = [], 0
    while i < len(lengths):
        j, longest = i, 0
        while j < len(lengths) and (j - i + 1) * f(max(longest, lengths[j])) <= level:
            longest = max(longest, lengths[j])
            j += 1
        if j == i:
            return None
        costs.append((j - i) * f(longest))
        i = j
    return costs


def least_cut(lengths, f, width, ceiling):
    """The cut of `lengths` into at most `width` batches at the least level found by
    bisection below `ceiling` (a level known to fit), padded with empty ranks."""
    low, high = 0.0, ceiling
    for _ in range(60):
        middle = (low + high) / 2
        costs = cut_at_level(lengths, f, middle)
        if costs is not None and len(costs) <= width:
            high = middle
        else:
            low = middle
    costs = cut_at_level(lengths, f, high)
    return costs + [0.0] * (width - len(costs))


def show_cost_order(steps_by_id, budget):
    ids = sorted(steps_by_id)
    plan = [steps_by_id[s] for s in ids]
    ordered = in_cost_order(plan)
    for s, costs in zip(ids, plan):
        print("plan step %d: dearest %.3f, mean %.3f of the budget, max/mean %.3f"
              % (s, max(costs) / budget, sum(costs) / len(costs) / budget, imbalance(costs)))
    for k, costs in enumerate(ordered):
        print("cost order %d: dearest %.3f, mean %.3f, max/mean %.3f"
              % (k, max(costs) / budget, sum(costs) / len(costs) / budget, imbalance(costs)))
    print("time (budgets): plan %.3f, cost order %.3f; worst max/mean: plan %.3f, cost order %.3f"
          % (sum(max(c) for c in plan) / budget, sum(max(c) for c in ordered) / budget,
             max(imbalance(c) for c in plan), max(imbalance(c) for c in ordered)))


def show_recut(samples, costs, lengths, f):
    pool = [lengths[i] for batch in samples for i in batch]
    width = len(costs)
    print("plan: dearest %.6g, max/mean %.4f" % (max(costs), imbalance(costs)))
    cut = least_cut(sorted(pool, reverse=True), f, width, max(costs) * 2)
    print("recut: dearest %.6g (%.4f of the plan's), max/mean %.4f"
          % (max(cut), max(cut) / max(costs), imbalance(cut)))


def split_epoch(steps):
    """Pairs of `steps` (lists of costs) split in cost order while any pair gains."""
    changed = True
    while changed:
        changed = False
        for i in range(len(steps)):
            for j in range(i + 1, len(steps)):
                a, b = steps[i], steps[j]
                if len(a) != len(b) or not (min(a) < max(b) and min(b) < max(a)):
                    continue
                pool = sorted(a + b, reverse=True)
                dear, cheap = pool[:len(a)], pool[len(a):]
                worse_before = max(imbalance(a), imbalance(b))
                if max(imbalance(dear), imbalance(cheap)) > worse_before + 1e-12:
                    continue
                if imbalance(dear) + imbalance(cheap) >= imbalance(a) + imbalance(b) - 1e-9:
                    continue
                steps[i], steps[j] = dear, cheap
                changed = True


def show_epoch_splits(costs_by_step):
    before, after, time_before, time_after = [], [], 0.0, 0.0
    for epoch in sorted({e for e, _ in costs_by_step}):
        steps = [list(costs_by_step[k]) for k in sorted(costs_by_step) if k[0] == epoch]
        before += [imbalance(c) for c in steps]
        time_before += sum(max(c) for c in steps)
        split_epoch(steps)
        after += [imbalance(c) for c in steps]
        time_after += sum(max(c) for c in steps)
    print("before: mean %.4f p99 %.3f" % (sum(before) / len(before), p99(before)))
    print("after:  mean %.4f p99 %.3f" % (sum(after) / len(after), p99(after)))
    print("time after / before: %.4f" % (time_after / time_before))


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.add_argument("--epoch", type=int, default=0)
    parser.add_argument("--steps", type=int, nargs="+")
    parser.add_argument("--recut", action="store_true", help="cut one step's samples again")
    parser.add_argument("--epoch-splits", action="store_true",
                        help="split pairs of steps of each whole epoch in cost order")
    args = parser.parse_args()
    if args.epoch_splits == bool(args.steps):
        raise SystemExit(f"{TOOL}: pass either --steps S [S ...] or --epoch-splits")
    if args.recut and len(args.steps or []) != 1:
        raise SystemExit(f"{TOOL}: --recut takes one step; pass --steps S")
    lengths = lengths_cut_to_budget(args, TOOL)
    f = per_sample_cost(args.cost, args.quadratic_a)
    if args.epoch_splits:
        by_step = collections.defaultdict(list)
        for epoch, step, _, cost in checked_dump_batches(args, lengths, f, TOOL):
            by_step[(epoch, step)].append(cost)
        show_epoch_splits(by_step)
        return
    costs, samples = collections.defaultdict(list), collections.defaultdict(list)
    for epoch, step, batch, cost in checked_dump_batches(args, lengths, f, TOOL):
        if epoch == args.epoch and step in args.steps:
            costs[step].append(cost)
            samples[step].append(batch)
    missing = sorted(set(args.steps) - set(costs))
    if missing:
        raise SystemExit(f"{TOOL}: {args.dump}: epoch {args.epoch} has no step {missing[0]}")
    if args.recut:
        step = args.steps[0]
        show_recut(samples[step], costs[step], lengths, f)
    else:
        show_cost_order(costs, f(args.tokens))


if __name__ == "__main__":
    main()
