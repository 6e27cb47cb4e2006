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
import collections
import json

from plan_dump import (checked_dump_steps, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser, ratio)

TOOL = "plan_exact_recut"


class Plan:
    def __init__(self, lengths, tokens, cost, cap):
        f = per_sample_cost(cost)
        self.lengths, self.cap = lengths, cap
        self.single = [f(n) / f(tokens) for n in lengths]

    def batch(self, b):
        return len(b) * max(self.single[i] for i in b) if b else 0.0

    def slots(self, b):
        return len(b) * max(self.lengths[i] for i in b) if b else 0

    def dearest(self, step):
        return max(self.batch(b) for b in step)

    def greedy(self, samples, level):
        """`samples` (longest first) cut in order at `level`; None where one alone is dearer."""
        batches, i = [], 0
        while i < len(samples):
            alone = self.single[samples[i]]
            if alone > level + 1e-15:
                return None
            take = min(self.cap, int(level / alone + 1e-12), len(samples) - i)
            batches.append(samples[i:i + take])
            i += take
        return batches

    def recut(self, step):
        """The step's samples in exactly W batches at the least dearest cost, or None."""
        width = len(step)
        samples = sorted((i for b in step for i in b), key=lambda i: -self.lengths[i])
        if len(samples) < width:
            return None
        low, high = max(self.single[i] for i in samples), self.dearest(step)
        if len(self.greedy(samples, high) or [None] * (width + 1)) > width:
            return None
        for _ in range(50):
            mid = (low + high) / 2
            cut = self.greedy(samples, mid)
            low, high = (low, mid) if cut is not None and len(cut) <= width else (mid, high)
        batches = self.greedy(samples, high)
        while len(batches) < width:  # halve the fullest batch until every rank has one
            k = max(range(len(batches)), key=lambda k: len(batches[k]))
            half = len(batches[k]) // 2
            batches[k:k + 1] = [batches[k][:half], batches[k][half:]]
        return batches


def recut_epoch(plan, steps):
    out = []
    for step in steps:
        cut = plan.recut(step)
        kept = (cut is not None and plan.dearest(cut) < plan.dearest(step)
                and sum(map(plan.slots, cut)) <= sum(map(plan.slots, step)))
        out.append(cut if kept else step)
    return out


def figures(plan, epochs, samples):
    ratios, slots, tokens, time = [], 0, 0, 0.0
    for epoch, steps in sorted(epochs.items()):
        served = collections.Counter(i for s in steps for b in s for i in b)
        if len(served) != samples or max(served.values()) != 1:
            raise SystemExit(f"{TOOL}: epoch {epoch} does not serve every sample once")
        for s in steps:
            ratios.append(ratio([plan.batch(b) for b in s]))
            time += plan.dearest(s)
            for b in s:
                if b:
                    slots += plan.slots(b)
                    tokens += sum(plan.lengths[i] for i in b)
    return {"padding": round((slots - tokens) / slots, 4), "mean": round(sum(ratios) / len(ratios), 4),
            "p99": round(p99(ratios), 4), "time_budgets": round(time, 3)}


def main():
    parser = plan_dump_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, required=True,
                        help="the plan's sample cap (the report's max_batch_size; 0: none)")
    args = parser.parse_args()
    lengths = lengths_cut_to_budget(args, TOOL)
    plan = Plan(lengths, args.tokens, args.cost, args.cap or len(lengths))
    by_step = checked_dump_steps(args, lengths, per_sample_cost(args.cost), TOOL)
    epochs = collections.defaultdict(list)
    for (epoch, _), batches in sorted(by_step.items()):
        epochs[epoch].append(batches)
    print("before", json.dumps(figures(plan, epochs, len(lengths))))
    after = {e: recut_epoch(plan, steps) for e, steps in epochs.items()}
    print("after ", json.dumps(figures(plan, after, len(lengths))))


if __name__ == "__main__":
    main()
