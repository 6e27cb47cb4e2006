#!/usr/bin/env python3
"""What exchanging several whole batches at once between two steps could do.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_block_swaps.py FILE plan.jsonl --tokens T [--cost linear|quadratic]
      [--quadratic-a 2048]

The planner's level_by_swaps exchanges one batch at a time, each exchange lowering the
larger max/mean of the two steps. A step whose lumps sit below a plateau of dearer
lumps in another step gains nothing from one exchange (its dearest batch rises to the
plateau's cost at once) but can gain from k of them made together. This prototype
takes, epoch by epoch, the worst step and exchanges its k cheapest batches for another
step's k dearest (every k and every other step), keeps the exchange that most lowers
the larger max/mean of the two while the two steps' summed max/mean rises by at most a
tenth of that gain (the planner's rule for more_level), and repeats until no exchange
helps. Batches keep their samples, so padding and pairs do not change. Prints the
imbalance mean and p99 over the dump's steps before and after, the worst steps after,
and the time: the sum over steps of the dearest batch (what every rank waits for),
which an exchange that lifts a step to a plateau raises. Lengths longer than --tokens
count as --tokens (--oversize truncate)."""
import collections

from plan_dump import (checked_dump_batches, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser, ratio)


def best_exchange(steps, worst):
    now = [ratio(s) for s in steps]
    best = None
    for t, partner in enumerate(steps):
        if t == worst or partner[-1] <= steps[worst][0]:
            continue
        for k in range(1, len(steps[worst])):
            out, incoming = steps[worst][:k], partner[-k:]
            if min(incoming) <= max(out):
                break
            w, p = sorted(steps[worst][k:] + incoming), sorted(partner[:-k] + out)
            after = max(ratio(w), ratio(p))
            gain = now[worst] - after
            if gain > 1e-12 and ratio(w) + ratio(p) <= now[worst] + now[t] + 0.1 * gain:
                if best is None or after < best[0]:
                    best = (after, t, w, p)
    return best


def level_epoch(steps):
    while True:
        worst = max(range(len(steps)), key=lambda s: ratio(steps[s]))
        if ratio(steps[worst]) <= 1.02:
            return
        found = best_exchange(steps, worst)
        if not found:
            return
        _, t, steps[worst], steps[t] = found


def main():
    args = plan_dump_parser(__doc__.splitlines()[0]).parse_args()
    lengths = lengths_cut_to_budget(args, "plan_block_swaps")
    per_sample = per_sample_cost(args.cost, args.quadratic_a)
    steps = collections.defaultdict(list)
    for epoch, step, _, cost in checked_dump_batches(args, lengths, per_sample, "plan_block_swaps"):
        steps[(epoch, step)].append(cost)
    before, after = [], []
    time_before = time_after = 0.0
    for epoch in sorted({e for e, _ in steps}):
        keys = sorted(k for k in steps if k[0] == epoch)
        epoch_steps = [sorted(steps[k]) for k in keys]
        before += [ratio(s) for s in epoch_steps]
        time_before += sum(max(s) for s in epoch_steps)
        level_epoch(epoch_steps)
        time_after += sum(max(s) for s in epoch_steps)
        after += [(ratio(s), k) for s, k in zip(epoch_steps, keys)]
    a = [r for r, _ in after]
    print("before: mean %.4f p99 %.3f" % (sum(before) / len(before), p99(before)))
    print("after:  mean %.4f p99 %.3f" % (sum(a) / len(a), p99(a)))
    print("time after / before: %.4f" % (time_after / time_before))
    print("worst after:", ", ".join("%s %.3f" % (k, r) for r, k in sorted(after, reverse=True)[:4]))


if __name__ == "__main__":
    main()
