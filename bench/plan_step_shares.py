#!/usr/bin/env python3
"""Where a plan's mean rank imbalance comes from: its steps grouped by how much work they hold.

  evenfeed plan --lengths FILE ... --dump plan.jsonl
  python3 bench/plan_step_shares.py FILE plan.jsonl --tokens T [--cost quadratic]
      [--quadratic-a 2048]

The imbalance mean that `evenfeed plan` reports is the mean over steps of max/mean of
the ranks' batch costs, every step counting alike. Under a sample cap, a plan can hold
steps of very short samples whose whole work is a fraction of a percent of a step at
the budget; their max/mean counts as much as any other step's. This prints, for each
band of step cost (the dearest batch of the step over the budget's cost), how many
steps fall in it, their mean max/mean, and how much of the reported mean's excess over
1 they make (summed over the band, over all steps). Batch costs are recomputed from
the lengths as the planner computes them (plan_dump.py), lengths cut to --tokens (as
with `--oversize truncate`)."""
import collections

from plan_dump import (checked_dump_batches, lengths_cut_to_budget, per_sample_cost,
                       plan_dump_parser)

BANDS = [(0.0, 0.01), (0.01, 0.05), (0.05, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.01)]


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    per_sample = per_sample_cost(args.cost, args.quadratic_a)
    lengths = lengths_cut_to_budget(args, "plan_step_shares")
    steps = collections.defaultdict(list)  # each (epoch, step)'s rank batch costs
    for epoch, step, _, cost in checked_dump_batches(args, lengths, per_sample, "plan_step_shares"):
        steps[(epoch, step)].append(cost)
    if not steps:
        raise SystemExit(f"{args.dump}: no steps")
    budget = per_sample(args.tokens)
    ratios = {}
    for key, costs in steps.items():
        mean = sum(costs) / len(costs)
        ratios[key] = (max(costs) / budget, max(costs) / mean if mean > 0 else 1.0)
    total = len(ratios)
    print(f"{total} steps, imbalance mean {sum(r for _, r in ratios.values()) / total:.4f}")
    print("dearest batch / budget   steps   their mean max/mean   excess over 1 they add")
    for low, high in BANDS:
        band = [r for dearest, r in ratios.values() if low <= dearest < high]
        if band:
            mean = sum(band) / len(band)
            excess = sum(r - 1 for r in band) / total
            print(f"{low:>9.2f} - {min(high, 1.0):<4.2f}     {len(band):>7}   {mean:>19.4f}"
                  f"   {excess:>22.4f}")


if __name__ == "__main__":
    main()
