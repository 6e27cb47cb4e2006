#!/usr/bin/env python3
"""Whether a dumped plan's dearest steps, planned again together, could meet the targets:
the estimate behind docs/plan_history.md's thirty-eighth session, not built into the
planner.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_dear_regroup.py FILE plan.jsonl --tokens T --cost quadratic
      --cap N [--out regrouped.jsonl]

In each epoch, the steps holding samples too dear to share a batch (over half the
budget's cost alone: "lumps") and the dearest other step (by dearest batch) are pooled.
The lumps and K x W - lumps filler batches make K steps at the budget (K the number of
steps that held lumps), dealt longest-processing-time first so each holds the same work;
the fillers are cut from the pooled samples that would sit awkwardly in the step left
over (dearer than its level, or whose best count falls short of it by more than 8%),
then from the longest. What is left is cut W ways at the least level, in length order,
under the sample cap; what that cut cannot hold (the shortest) joins the step of the
longest samples among the others, which is cut W ways again. The filler level and the
level the awkward samples are judged at are scanned, and the regroup whose worst step
is most level kept. The step order is then chosen among 3,000 seeded shuffles for the
least lag-1 correlation of step mean length.

With --runs (fortieth session) the K steps take the lumps and filler batches in cost
order, W at a time, instead of dealt evenly: the dearest step holds the documents at the
budget and the next dearest lumps, and the fillers are cut to 0.20-1.00 of the budget.

The plan's figures before and after are recomputed from the dumps as `evenfeed plan`
computes them (padding, imbalance mean and p99 under the cost, lag-1 of step mean
length, pairs of one epoch batched together again in the next), and every sample is
checked to be served exactly once an epoch. Plain length order: the planner's noisy key
and its deal of batch mates are not modelled, so the pairs figure is that of plain cuts.
Lengths longer than --tokens count as --tokens (--oversize truncate)."""
import collections
import json
import random

from plan_dump import (checked_dump_steps, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser, ratio)

TOOL = "plan_dear_regroup"
AWKWARD_SHORTFALL = 0.92  # a sample is awkward where its best count reaches < 92% of a level
FILLER_LEVELS = (1.0, 0.97, 0.94, 0.91)  # of the budget's cost
RUNS_FILLER_LEVELS = tuple(0.20 + 0.02 * k for k in range(41))  # with --runs
AWKWARD_LEVELS = [0.10 + 0.0025 * k for k in range(81)]  # of the budget's cost
ORDER_SHUFFLES = 3000


class Costs:
    """Batch costs as the planner counts them, as shares of the budget's cost."""

    def __init__(self, lengths, tokens, cost, cap):
        f = per_sample_cost(cost)
        budget = f(tokens)
        self.lengths = lengths
        self.cap = cap
        self.single = [f(n) / budget for n in lengths]

    def batch(self, samples):
        return len(samples) * max(self.single[i] for i in samples) if samples else 0.0

    def ratio(self, step):
        return ratio([self.batch(b) for b in step])


def cut_at(costs, samples, level):
    """`samples` (longest first) cut in order into batches of cost at most `level`."""
    batches, current = [], []
    for i in samples:
        if current and ((len(current) + 1) * costs.single[current[0]] > level
                        or len(current) >= costs.cap):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def least_level(costs, samples, most_batches):
    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        if len(cut_at(costs, samples, mid)) <= most_batches:
            high = mid
        else:
            low = mid
    return high


def whole_cut(costs, samples, width):
    """All of `samples` in `width` batches (some empty) at the least level."""
    batches = cut_at(costs, samples, least_level(costs, samples, width))
    return batches + [[] for _ in range(width - len(batches))]


def cut_with_spill(costs, samples, width):
    """The most level `width` batches of the longest of `samples`, and the rest."""
    if not samples:
        return None
    low = least_level(costs, samples, 8 * width)
    high = least_level(costs, samples, width)
    best = None
    for k in range(121):
        batches = cut_at(costs, samples, low * (high / low) ** (k / 120))
        if len(batches) < width:
            continue
        r = costs.ratio(batches[:width])
        if best is None or r < best[0]:
            best = (r, batches[:width], [i for b in batches[width:] for i in b])
    return best


def fillers_from(costs, samples, most, level):
    """Batches of as many of `samples` (longest first) as fit under `level`."""
    batches, j = [], 0
    while len(batches) < most and j < len(samples):
        n = max(1, min(costs.cap, int(level / costs.single[samples[j]] + 1e-12)))
        batches.append(samples[j:j + n])
        j += n
    return batches, samples[j:]


def deal(costs, batches, steps, width, runs=False):
    """`batches` dealt dearest first, each to the step of least work with a rank free
    (or, with `runs`, W at a time in cost order)."""
    if runs:
        ordered = sorted(batches, key=lambda b: -costs.batch(b))
        runs_of = [ordered[k * width:(k + 1) * width] for k in range(steps)]
        return [r + [[] for _ in range(width - len(r))] for r in runs_of]
    dealt, work = [[] for _ in range(steps)], [0.0] * steps
    for b in sorted(batches, key=lambda b: -costs.batch(b)):
        k = min((k for k in range(steps) if len(dealt[k]) < width), key=lambda k: work[k])
        dealt[k].append(b)
        work[k] += costs.batch(b)
    return [d + [[] for _ in range(width - len(d))] for d in dealt]


def is_awkward(costs, i, level):
    c = costs.single[i]
    return c > level or max(1, int(level / c)) * c < AWKWARD_SHORTFALL * level


def regroup_pool(costs, pool, steps_of_lumps, width, runs=False):
    """The lumps' steps and the step left over for `pool` (longest first), and what
    that step could not hold, for the most level scan point."""
    lumps = [i for i in pool if costs.single[i] > 0.5]
    rest = [i for i in pool if costs.single[i] <= 0.5]
    slots = steps_of_lumps * width - len(lumps)
    if slots < 0:
        return None
    best = None
    for filler_level in RUNS_FILLER_LEVELS if runs else FILLER_LEVELS:
        for awkward_level in AWKWARD_LEVELS:
            awkward = [i for i in rest if is_awkward(costs, i, awkward_level)]
            fillers, awkward_left = fillers_from(costs, awkward, slots, filler_level)
            taken = set(awkward)
            more, left = fillers_from(costs, [i for i in rest if i not in taken],
                                      slots - len(fillers), filler_level)
            left = sorted(left + awkward_left, key=lambda i: -costs.lengths[i])
            top = deal(costs, [[i] for i in lumps] + fillers + more, steps_of_lumps, width, runs)
            cut = cut_with_spill(costs, left, width)
            if cut is None:
                continue
            worst = max(max(costs.ratio(s) for s in top), cut[0])
            if best is None or worst < best[0]:
                best = (worst, top + [cut[1]], cut[2])
    return best


def regroup_epoch(costs, steps, width, runs=False):
    """One epoch's steps (lists of batches) with its dearest ones planned again."""
    with_lumps = [s for s in steps if any(costs.single[i] > 0.5 for b in s for i in b)]
    others = [s for s in steps if s not in with_lumps]
    if not with_lumps or not others:
        return steps
    next_dearest = max(others, key=lambda s: max(costs.batch(b) for b in s))
    others.remove(next_dearest)
    pool = sorted((i for s in with_lumps + [next_dearest] for b in s for i in b),
                  key=lambda i: -costs.lengths[i])
    found = regroup_pool(costs, pool, len(with_lumps), width, runs)
    if found is None:
        return steps
    _, dear, spill = found
    if spill and others:
        host = max(others, key=lambda s: max(costs.lengths[i] for b in s for i in b))
        merged = sorted(spill + [i for b in host for i in b], key=lambda i: -costs.lengths[i])
        others[others.index(host)] = whole_cut(costs, merged, width)
    elif spill:
        dear.append(whole_cut(costs, sorted(spill, key=lambda i: -costs.lengths[i]), width))
    return dear + others


def step_means(costs, steps):
    return [sum(costs.lengths[i] for b in s for i in b) / sum(len(b) for b in s) for s in steps]


def lag1(values):
    m = sum(values) / len(values)
    den = sum((x - m) ** 2 for x in values)
    num = sum((values[k] - m) * (values[k + 1] - m) for k in range(len(values) - 1))
    return num / den if den > 0 else 0.0


def least_lag_order(costs, steps, seed):
    rng = random.Random(seed)
    best = (abs(lag1(step_means(costs, steps))), steps)
    for _ in range(ORDER_SHUFFLES):
        order = steps[:]
        rng.shuffle(order)
        lag = abs(lag1(step_means(costs, order)))
        if lag < best[0]:
            best = (lag, order)
    return best[1]


def figures(costs, epochs, samples):
    """The report's figures of `epochs` ({epoch: [steps]}), every epoch checked."""
    ratios, slots, tokens, lags, shares, before = [], 0, 0, [], [], None
    for epoch, steps in sorted(epochs.items()):
        served = collections.Counter(i for s in steps for b in s for i in b)
        if len(served) != samples or max(served.values()) != 1:
            raise SystemExit(f"{TOOL}: epoch {epoch} does not serve every sample once")
        for s in steps:
            ratios.append(costs.ratio(s))
            for b in s:
                if b:
                    slots += len(b) * max(costs.lengths[i] for i in b)
                    tokens += sum(costs.lengths[i] for i in b)
        if len(steps) >= 3:
            lags.append(lag1(step_means(costs, steps)))
        batch_of = {i: (k, r) for k, s in enumerate(steps) for r, b in enumerate(s) for i in b}
        if before is not None:
            pairs = sum(len(b) * (len(b) - 1) // 2 for b in before)
            again = sum(v * (v - 1) // 2 for b in before
                        for v in collections.Counter(batch_of[i] for i in b).values())
            shares.append(again / pairs if pairs else 0.0)
        before = [b for s in steps for b in s if len(b) > 1]
    ordered = sorted(ratios)
    return {"steps": [len(s) for _, s in sorted(epochs.items())],
            "padding": (slots - tokens) / slots, "mean": sum(ratios) / len(ratios),
            "p99": p99(ratios),
            "lag1": sum(lags) / len(lags) if lags else 0.0,
            "pairs_again": sum(shares) / len(shares) if shares else None,
            "worst_steps": [round(r, 3) for r in ordered[-4:]]}


def main():
    parser = plan_dump_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=int, required=True,
                        help="the plan's sample cap (the report's max_batch_size)")
    parser.add_argument("--out", help="write the regrouped plan here, as a dump")
    parser.add_argument("--runs", action="store_true",
                        help="the lumps' steps take runs of the cost order (see above)")
    args = parser.parse_args()
    lengths = lengths_cut_to_budget(args, TOOL)
    costs = Costs(lengths, args.tokens, args.cost, args.cap)
    by_step = checked_dump_steps(args, lengths, per_sample_cost(args.cost), TOOL)
    plan = collections.defaultdict(list)
    for (epoch, _), batches in sorted(by_step.items()):
        plan[epoch].append(batches)
    width = len(next(iter(plan.values()))[0])
    regrouped = {e: least_lag_order(costs, regroup_epoch(costs, steps, width, args.runs), e)
                 for e, steps in plan.items()}
    print("before", json.dumps(figures(costs, plan, len(lengths))))
    print("after ", json.dumps(figures(costs, regrouped, len(lengths))))
    if args.out:
        with open(args.out, "w") as out:
            for e, steps in sorted(regrouped.items()):
                for k, step in enumerate(steps):
                    for r, b in enumerate(step):
                        out.write(json.dumps({"epoch": e, "step": k, "rank": r,
                                              "world_size": width, "samples": b}) + "\n")


if __name__ == "__main__":
    main()
