#!/usr/bin/env python3
"""How much a plan's imbalance falls when single samples change batch, across steps.

  python3 bench/plan_sample_exchanges.py LENGTHS DUMP --tokens T [--cost quadratic]
      [--quadratic-a 2048] [--cap N] [--padding 0.0195] [--quicker] [--verbose]

A prototype over a `evenfeed plan --dump` (added 2026-12-05, twenty-sixth session): the
planner levels steps by exchanging whole batches (level_by_swaps) and by giving fine
samples of a step's dearest batches to batches of other steps with idle room
(level_by_moves). This tries moving one sample of a step's dearest batch (its longest,
second longest or shortest: any other changes the batch's cost as one of those does) to
any other batch of the epoch, and exchanging it for a shorter one of any other batch,
the move lowering the sum over the two steps touched of max/mean - 1 (plus 10x what
passes 1.10) the most taken first, from the least level steps, until none helps. With
--quicker, only moves that make the two steps' dearest batches cheaper in all, so that
the epoch takes less time. Batches keep the budget and the cap, and the plan's padding
stays under --padding. It prints the plan's mean and p99 of max/mean, padding and
useful share before and after: what such moves could gain, before anyone builds them.
Lengths are cut to the budget, as `--oversize truncate` plans them. --cost defaults to
quadratic here."""
from plan_dump import (checked_dump_steps, lengths_cut_to_budget, p99, per_sample_cost,
                       plan_dump_parser, ratio)

TOOL = "plan_sample_exchanges"


def excess(costs):
    """What a move lowers: max/mean - 1, and ten times what passes the p99 target."""
    r = ratio(costs)
    return (r - 1) + 10 * max(0.0, r - 1.10)


def candidates(batch, lengths, below=None):
    """Positions worth trying in `batch`: its longest, second longest and shortest sample
    (of those shorter than `below`, when given)."""
    order = sorted((lengths[v], k) for k, v in enumerate(batch)
                   if below is None or lengths[v] < below)
    return sorted({order[0][1], order[-1][1]} | ({order[-2][1]} if len(order) > 1 else set())
                  ) if order else []


class Epoch:
    """One epoch's steps (lists of W batches of sample ids) and their costs, with the
    moves of the module's docstring."""

    def __init__(self, steps, lengths, per_sample, budget, cap, quicker):
        self.steps, self.lengths, self.f = steps, lengths, per_sample
        self.budget, self.cap, self.quicker = budget, cap, quicker
        self.costs = [[self.cost(b) for b in s] for s in steps]
        self.excess = [excess(c) for c in self.costs]

    def head(self, batch):
        return max((self.lengths[i] for i in batch), default=0)

    def cost(self, batch):
        return len(batch) * self.f(self.head(batch)) if batch else 0

    def slots(self, batch):
        return len(batch) * self.head(batch)

    def gain(self, s, i, new_i, t, j, new_j):
        """The change in excess when batch i of step s comes to cost new_i and batch j of
        step t new_j (0 where --quicker forbids it)."""
        cs = list(self.costs[s])
        cs[i] = new_i
        ct = cs if s == t else list(self.costs[t])
        ct[j] = new_j
        if self.quicker:
            old_top = max(self.costs[s]) + (max(self.costs[t]) if t != s else 0)
            new_top = max(cs) + (max(ct) if t != s else 0)
            if new_top >= old_top * (1 - 1e-9):
                return 0
        if s == t:
            return excess(cs) - self.excess[s]
        return excess(cs) + excess(ct) - self.excess[s] - self.excess[t]

    def best_move(self, s, i, room):
        """The best move out of batch i of step s: (gain, x, t, j, y, slots added), y None
        for a move, the position swapped for otherwise; None when none helps."""
        best = None
        b = self.steps[s][i]
        for x in candidates(b, self.lengths):
            sample = b[x]
            rest = b[:x] + b[x + 1:]
            for t, step in enumerate(self.steps):
                for j, tb in enumerate(step):
                    if (t, j) == (s, i):
                        continue
                    tries = [(None, rest, tb + [sample])] if rest and len(tb) < self.cap else []
                    tries += [(y, rest + [tb[y]], tb[:y] + tb[y + 1:] + [sample])
                              for y in candidates(tb, self.lengths, below=self.lengths[sample])]
                    for y, source, target in tries:
                        new = self.cost(target)
                        added = (self.slots(source) + self.slots(target)
                                 - self.slots(b) - self.slots(tb))
                        if new > self.budget or added > room:
                            continue
                        d = self.gain(s, i, self.cost(source), t, j, new)
                        if d < -1e-6 and (best is None or d < best[0]):
                            best = (d, x, t, j, y, added)
        return best

    def level(self, room, verbose):
        """Makes the best move of the least level steps' dearest batches until none
        helps; returns the padded slots still free."""
        while True:
            found = None
            for s in sorted(range(len(self.steps)), key=lambda k: -self.excess[k])[:6]:
                if self.excess[s] < 0.005:
                    break
                top = max(self.costs[s])
                for i in (k for k in range(len(self.steps[s])) if self.costs[s][k] >= top * 0.999):
                    move = self.best_move(s, i, room)
                    if move and (found is None or move[0] < found[0][0]):
                        found = (move, s, i)
                if found:
                    break
            if not found:
                return room
            (_, x, t, j, y, added), s, i = found
            room -= added
            self.apply(s, i, x, t, j, y, verbose)

    def apply(self, s, i, x, t, j, y, verbose):
        source, target = self.steps[s][i], self.steps[t][j]
        sample = source.pop(x)
        if y is not None:
            source.append(target.pop(y))
        target.append(sample)
        before = [(max(self.costs[k]) / self.budget, self.excess[k]) for k in (s, t)]
        for k in {s, t}:
            self.costs[k] = [self.cost(b) for b in self.steps[k]]
            self.excess[k] = excess(self.costs[k])
        if verbose:
            after = [(max(self.costs[k]) / self.budget, self.excess[k]) for k in (s, t)]
            print("  step %d %s -> step %d %s: %s length %d; now %s, %s" % (
                s, "(%.4f, %.4f)" % before[0], t, "(%.4f, %.4f)" % before[1],
                "moved" if y is None else "swapped for a shorter one", self.lengths[sample],
                "(%.4f, %.4f)" % after[0], "(%.4f, %.4f)" % after[1]))


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.set_defaults(cost="quadratic")
    parser.add_argument("--cap", type=int, default=1 << 62, help="the plan's sample cap")
    parser.add_argument("--padding", type=float, default=0.0195, help="padding share kept under")
    parser.add_argument("--quicker", action="store_true",
                        help="take only moves that make the two steps' dearest batches cheaper")
    parser.add_argument("--verbose", action="store_true", help="print each move")
    args = parser.parse_args()
    lengths = lengths_cut_to_budget(args, TOOL)
    f = per_sample_cost(args.cost, args.quadratic_a)
    budget = f(args.tokens)
    by_step = checked_dump_steps(args, lengths, f, TOOL)
    epochs = [Epoch([by_step[k] for k in sorted(by_step) if k[0] == e], lengths, f, budget,
                    args.cap, args.quicker) for e in sorted({k[0] for k in by_step})]

    def report(label):
        steps = [s for e in epochs for s in e.steps]
        levels = [ratio([e.cost(b) for b in s]) for e in epochs for s in e.steps]
        slots = sum(epochs[0].slots(b) for s in steps for b in s)
        tokens = sum(lengths[i] for s in steps for b in s for i in b)
        own = sum(f(lengths[i]) for s in steps for b in s for i in b)
        time = sum(max(epochs[0].cost(b) for b in s) for s in steps)
        print("%s mean %.4f p99 %.3f padding %.3f%% useful share %.3f%%" % (
            label, sum(levels) / len(levels), p99(levels), 100 * (1 - tokens / slots),
            100 * own / (len(steps[0]) * time)))
        return slots, tokens

    slots, tokens = report("before:")
    room = tokens / (1 - args.padding) - slots  # padded slots the moves may add
    for epoch in epochs:
        room = epoch.level(room, args.verbose)
    report("after: ")


if __name__ == "__main__":
    main()
