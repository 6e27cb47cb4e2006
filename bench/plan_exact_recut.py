#!/usr/bin/env python3
"""What the balance of a dumped plan's steps owes to padding: each step's samples cut
again, in exact length order, into W batches at the least dearest cost. The estimate
behind docs/plan_history.md's fortieth session, not built into the planner.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_exact_recut.py FILE plan.jsonl --tokens T --cost C --cap N

The planner cuts batches from a noisy length order (so that batch mates change from
epoch to epoch) and levels its steps within the 2% padding target. Here each step keeps
its samples (so its mean length, the step order and lag-1 are unchanged) and is cut
again in exact length order, greedily at the least level that makes at most W batches
(bisected; split in two where fewer), under the sample cap. A re-cut is kept where it
makes the step's dearest batch cheaper (the step quicker) without more padded slots.
Prints the figures before and after, as `evenfeed plan` computes them (time_budgets: the
sum over steps of the dearest batch, in budgets), every sample checked to be served
once an epoch. The planner's deal of batch mates is not modelled: no pairs figure."""
from plan_dump import run_cut_script

TOOL = "plan_exact_recut"


def greedy(plan, samples, level):
    """`samples` (longest first) cut in order at `level`; None where one alone is dearer."""
    batches, i = [], 0
    while i < len(samples):
        alone = plan.single[samples[i]]
        if alone > level + 1e-15:
            return None
        take = min(plan.cap, int(level / alone + 1e-12), len(samples) - i)
        batches.append(samples[i:i + take])
        i += take
    return batches


def recut(plan, step):
    """The step's samples in exactly W batches at the least dearest cost, or None."""
    width = len(step)
    samples = plan.longest_first(i for b in step for i in b)
    if len(samples) < width:
        return None
    low, high = max(plan.single[i] for i in samples), plan.dearest(step)
    if len(greedy(plan, samples, high) or [None] * (width + 1)) > width:
        return None
    for _ in range(50):
        mid = (low + high) / 2
        cut = greedy(plan, samples, mid)
        low, high = (low, mid) if cut is not None and len(cut) <= width else (mid, high)
    batches = greedy(plan, samples, high)
    while len(batches) < width:  # halve the fullest batch until every rank has one
        k = max(range(len(batches)), key=lambda k: len(batches[k]))
        half = len(batches[k]) // 2
        batches[k:k + 1] = [batches[k][:half], batches[k][half:]]
    return batches


def recut_epoch(plan, steps, _width):
    out = []
    for step in steps:
        cut = recut(plan, step)
        kept = (cut is not None and plan.dearest(cut) < plan.dearest(step)
                and sum(map(plan.slots, cut)) <= sum(map(plan.slots, step)))
        out.append(cut if kept else step)
    return out


def main():
    run_cut_script(__doc__, TOOL, recut_epoch)


if __name__ == "__main__":
    main()
