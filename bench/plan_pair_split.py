#!/usr/bin/env python3
"""Whether a dumped plan's worst steps get more level when their cheapest batch of a few
dear samples is split up: the estimate behind docs/plan_history.md's fortieth session,
not built into the planner.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_pair_split.py FILE plan.jsonl --tokens T --cost quadratic --cap N

A step at the budget often holds, beside its documents at the budget, pairs of samples
that cost 0.3-0.4 of it alone (0.6-0.8 together), the batches that leave it least level.
Here, while an epoch's worst step is above 1.10: its cheapest batch of two or more
samples is split into batches of one, which go to another step whose dearest batch is
at least as dear as each (so that step gets no longer); that step gives back the dearest
batch its fine samples (each under a sixth of the worst step's dearest) make under the
worst step's dearest cost, and the rest of its samples are cut again in length order
into the ranks left, at the least level. The move is kept where both steps end below
the worst step's old max/mean, the host that leaves the two most level chosen.

Prints the plan's figures before and after, as `evenfeed plan` computes them, every
sample checked to be served exactly once an epoch. Plain length-order cuts: the
planner's deal of batch mates is not modelled, so no pairs figure is given."""
from plan_dump import run_cut_script

TOOL = "plan_pair_split"
TARGET = 1.10  # issue 3's p99 target: steps above it are worked on
FINE_SHARE = 1 / 6  # a sample is fine when it costs under this share of the worst's dearest
MOST_MOVES = 20  # per epoch


def cut_ways(plan, samples, width):
    """`samples` in `width` batches (some perhaps empty) at the least level."""
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if len(plan.cut_at(samples, mid)) <= width else (mid, high)
    batches = plan.cut_at(samples, high)
    return batches + [[] for _ in range(width - len(batches))]


def host_after(plan, host, pieces, level, width):
    """`host` taking `pieces` (batches of one) and giving back its fine samples' dearest
    batch under `level`: (new host, the batch given), or None."""
    samples = plan.longest_first(i for b in host for i in b)
    fine = [i for i in samples if plan.single[i] <= FINE_SHARE * level]
    coarse = [i for i in samples if plan.single[i] > FINE_SHARE * level]
    if not fine:
        return None
    given = plan.cut_at(fine, level)[0]
    rest = plan.longest_first(coarse + fine[len(given):])
    new_host = pieces + cut_ways(plan, rest, width - len(pieces))
    if len(new_host) != width:
        return None
    return new_host, given


def best_split(plan, steps, worst, width):
    """The split of the worst step's cheapest batch of several samples that leaves the
    two steps most level, or None."""
    old = plan.ratio(steps[worst])
    level = plan.dearest(steps[worst])
    candidates = sorted((k for k, b in enumerate(steps[worst]) if len(b) >= 2),
                        key=lambda k: plan.batch(steps[worst][k]))
    for k in candidates:
        batch = steps[worst][k]
        best = None
        for h, host in enumerate(steps):
            if h == worst or max(plan.single[i] for i in batch) > plan.dearest(host):
                continue
            found = host_after(plan, host, [[i] for i in batch], level, width)
            if found is None or plan.batch(found[1]) <= plan.batch(batch):
                continue
            new_worst = steps[worst][:k] + steps[worst][k + 1:] + [found[1]]
            a, b = plan.ratio(new_worst), plan.ratio(found[0])
            if max(a, b) < old and (best is None or a + b < best[0]):
                best = (a + b, h, new_worst, found[0])
        if best:
            return best[1:]
    return None


def split_epoch(plan, steps, width):
    for _ in range(MOST_MOVES):
        worst = max(range(len(steps)), key=lambda s: plan.ratio(steps[s]))
        if plan.ratio(steps[worst]) <= TARGET:
            break
        found = best_split(plan, steps, worst, width)
        if found is None:
            break
        host, new_worst, new_host = found
        steps[worst], steps[host] = new_worst, new_host
    return steps


def main():
    run_cut_script(__doc__, TOOL, split_epoch)


if __name__ == "__main__":
    main()
