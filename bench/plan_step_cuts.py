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

Lengths longer than --tokens count as --tokens (--oversize truncate)."""
import collections

from plan_dump import (checked_dump_batches, lengths_cut_to_budget, per_sample_cost,
                       plan_dump_parser)

TOOL = "plan_step_cuts"


def imbalance(costs):
    total = sum(costs)
    return max(costs) * len(costs) / total if total > 0 else 1.0


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


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.add_argument("--epoch", type=int, default=0)
    parser.add_argument("--steps", type=int, nargs="+", required=True)
    parser.add_argument("--recut", action="store_true", help="cut one step's samples again")
    args = parser.parse_args()
    if args.recut and len(args.steps) != 1:
        raise SystemExit(f"{TOOL}: --recut takes one step; pass --steps S")
    lengths = lengths_cut_to_budget(args, TOOL)
    f = per_sample_cost(args.cost, args.quadratic_a)
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
