#!/usr/bin/env python3
"""What spreading every lump of an epoch evenly over its steps of lumps would give.

  python3 bench/plan_lump_spread.py LENGTHS DUMP --tokens T [--cost quadratic]
      [--quadratic-a 2048] [--lump 0.667]

A prototype over a `evenfeed plan --dump` under a token bound (added 2026-12-05,
twenty-sixth session). The planner has since built what it pointed to, by other means:
a census of the epoch's lumps taken before it is planned (bucketing/lump_census.h) and
a window end that deals them (FinishWay::deal_lumps, deal_lumps_evenly); this still
measures what dealing a dump's lumps would give. plan_lump_runs (bucketing/lump_runs.h) gives each step
a run of the next dearest lumps (samples alone in a batch, dearer than --lump of the
budget, which no batch of shorter samples reaches under the bound), completed with
partners, and swap_to_level then exchanges single batches. Where the lumps below a
plateau at the budget are sparse (0.67-0.99 of it), the runs leave a step of them at
max/mean 1.10 or more that no single exchange lowers. This takes, per epoch, the steps
that hold lumps, deals all their lumps over lumps/W steps (dearest first, each lump
below the dearest to the step with the most room left), and puts their partners in
steps of their own, W at a time, dearest first; every other step is kept. It prints
the plan's mean and p99 of max/mean and its time (the sum of each step's dearest batch,
in budgets) before and after. Only where each epoch's lumps divide by W. --cost
defaults to quadratic here."""
from plan_dump import (checked_dump_steps, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser, ratio)

TOOL = "plan_lump_spread"


def spread(lumps, partners, W):
    """The steps (lists of costs) of `lumps` dealt over len(lumps) / W steps, each below
    the dearest to the step short of W of it by the least, then `partners` W at a time,
    dearest first."""
    top = max(lumps)
    steps = [[] for _ in range(len(lumps) // W)]
    for c in sorted(lumps, reverse=True):
        open_steps = [s for s in steps if len(s) < W]
        if c >= top * (1 - 1e-12):
            target = min(open_steps, key=len)
        else:
            target = max(open_steps, key=lambda s: sum(s) + (W - len(s)) * top)
        target.append(c)
    partners = sorted(partners, reverse=True)
    for i in range(0, len(partners), W):
        step = partners[i:i + W]
        steps.append(step + [0.0] * (W - len(step)))
    return steps


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.set_defaults(cost="quadratic")
    parser.add_argument("--lump", type=float, default=0.667,
                        help="a lump costs more than this share of the budget")
    args = parser.parse_args()
    lengths = lengths_cut_to_budget(args, TOOL)
    f = per_sample_cost(args.cost, args.quadratic_a)
    budget = f(args.tokens)
    by_step = checked_dump_steps(args, lengths, f, TOOL)

    def cost(b):
        return len(b) * f(max(lengths[i] for i in b)) / budget if b else 0.0

    def is_lump(b):
        return len(b) == 1 and cost(b) > args.lump

    before, after = [], []
    for e in sorted({k[0] for k in by_step}):
        steps = [by_step[k] for k in sorted(by_step) if k[0] == e]
        W = len(steps[0])
        before += [[cost(b) for b in s] for s in steps]
        holding = [s for s in steps if any(is_lump(b) for b in s)]
        lumps = [cost(b) for s in holding for b in s if is_lump(b)]
        partners = [cost(b) for s in holding for b in s if not is_lump(b)]
        if len(lumps) % W:
            raise SystemExit("%s: epoch %d: %d lumps do not divide by %d ranks" %
                             (TOOL, e, len(lumps), W))
        after += [[cost(b) for b in s] for s in steps if not any(is_lump(b) for b in s)]
        made = spread(lumps, partners, W)
        after += made
        print("epoch %d: %d steps holding %d lumps -> %s" % (
            e, len(holding), len(lumps), " ".join("%.4f" % ratio(s) for s in made)))

    def summary(steps):
        levels = [ratio(s) for s in steps]
        return "%d steps, mean %.4f, p99 %.4f, time %.3f budgets" % (
            len(levels), sum(levels) / len(levels), p99(levels), sum(max(s) for s in steps))

    print("before:", summary(before))
    print("after: ", summary(after))


if __name__ == "__main__":
    main()
