#!/usr/bin/env python3
"""What reshaping a plan's batches could do to its reported imbalance, and to its time.

  evenfeed plan --lengths FILE ... --dump plan.jsonl
  python3 bench/plan_reshape.py FILE plan.jsonl --tokens T [--cost quadratic]
      [--max-batch-size C] [--padding 0.019] [--iterations N]

A batch's cost depends only on its shape: how many samples it holds and how long its
longest is (n x f(longest), plan_dump.py). Any set of shapes can be filled with the
epoch's samples, each sample exactly once and padded to its batch's longest, when
(1) for every length x, the slots of batches whose longest is at least x are at least
the samples at least x long, and (2) no more batches have a longest of x than there
are samples of length x (each batch needs one as its longest). This searches, epoch by
epoch, over the plan's shapes with four moves that keep (1) and (2): a slot moved from
one batch to another; a batch's longest raised or lowered to a neighbouring length
(more or fewer padded slots); a batch's longest lowered by a few lengths while it takes
one slot more from another batch (a batch one sample too dear to take another); and two
batches of different steps exchanged. A move is kept when it lowers the objective (and
now and then when it does not: simulated annealing, seeded, so runs repeat), never when
the epoch's padding share would pass --padding, nor when a batch would pass the budget
or the cap.

The objective is the reported imbalance: the mean over steps of max/mean, the worst
steps weighing more (each step above 1.08 counts 21 times its excess). Beside it the
epoch's time is printed: the sum over steps of each step's dearest batch, since a step
lasts as long as its dearest rank. Raising a step's light batches by padding them
lowers its max/mean without shortening it; if the imbalance falls and the time does
not, that is all the search found.

At the end the search's shapes are filled (each batch's longest first, the other
samples longest first into the roomiest slots left) and every figure recomputed from
the filled batches, so what is printed is a plan that exists. It is a search, not a
bound: it finds some of what reshaping could gain, not all."""
import collections
import math
import random

from plan_dump import (checked_dump_batches, lengths_cut_to_budget, per_sample_cost,
                       plan_dump_parser)


class Epoch:
    """One epoch's shapes and what keeps them fillable."""

    def __init__(self, steps, lengths, per_sample, budget, cap):
        self.steps = steps  # steps[s][r] = [count, longest]
        self.f, self.budget, self.cap = per_sample, budget, cap
        self.lengths = sorted(set(lengths))
        self.index = {x: i for i, x in enumerate(self.lengths)}
        k = len(self.lengths)
        self.samples_of = [0] * k
        for x in lengths:
            self.samples_of[self.index[x]] += 1
        self.longest_of = [0] * k  # batches whose longest is lengths[i]
        slots_of = [0] * k
        for step in steps:
            for n, m in step:
                if n:
                    self.longest_of[self.index[m]] += 1
                    slots_of[self.index[m]] += n
        # slack[i]: slots in batches whose longest is at least lengths[i], less the
        # samples at least that long; (1) above is slack >= 0 everywhere.
        self.slack, running = [0] * k, 0
        for i in range(k - 1, -1, -1):
            running += slots_of[i] - self.samples_of[i]
            self.slack[i] = running
        if min(self.slack) < 0 or running != 0:
            raise ValueError("the dump's batches do not hold these lengths; pass the lengths "
                             "the plan was made from")
        self.tokens = sum(lengths)
        self.slot_tokens = sum(n * m for step in steps for n, m in step)
        self.own = sum(per_sample(x) for x in lengths) / budget

    def cost(self, shape):
        n, m = shape
        return n * self.f(m) / self.budget if n else 0.0

    def fits(self, n, m):
        return n <= self.cap and n * self.f(m) <= self.budget

    def padding(self, extra=0):
        return 1 - self.tokens / (self.slot_tokens + extra)

    def step_figures(self, step):
        costs = [self.cost(b) for b in step]
        total = sum(costs)
        dearest = max(costs)
        return dearest, (dearest * len(costs) / total if total > 0 else 1.0)

    def add_slack(self, lo, hi, amount):
        """Adds `amount` to slack at length indices lo+1..hi."""
        for i in range(lo + 1, hi + 1):
            self.slack[i] += amount

    def has_slack(self, lo, hi, amount):
        return lo >= hi or min(self.slack[lo + 1:hi + 1]) >= amount


def fill(epoch, all_lengths):
    """Real batches for the shapes: each batch's longest first, then the other samples
    longest first into the roomiest slots left. Returns the filled (count, longest) of
    each batch, step by step, and whether every sample fit its slot."""
    pool = collections.Counter(all_lengths)
    filled = []
    for step in epoch.steps:
        row = []
        for n, m in step:
            if n:
                pool[m] -= 1
                assert pool[m] >= 0
            row.append([1 if n else 0, m if n else 0])
        filled.append(row)
    slots = sorted(((m, s, r) for s, step in enumerate(epoch.steps)
                    for r, (n, m) in enumerate(step) for _ in range(n - 1)), reverse=True)
    rest = sorted(pool.elements(), reverse=True)
    ok = len(slots) == len(rest)
    for (m, s, r), x in zip(slots, rest):
        ok = ok and x <= m
        filled[s][r][0] += 1
        filled[s][r][1] = max(filled[s][r][1], x)
    return filled, ok


def figures(epoch, steps):
    ratios, dearest_sum = [], 0.0
    for step in steps:
        dearest, ratio = epoch.step_figures(step)
        ratios.append(ratio)
        dearest_sum += dearest
    ranks = len(steps[0])
    slot_tokens = sum(n * m for step in steps for n, m in step)
    return {
        "mean": sum(ratios) / len(ratios),
        "worst": max(ratios),
        "time": dearest_sum,
        "useful": epoch.own / (ranks * dearest_sum),
        "padding": 1 - epoch.tokens / slot_tokens,
    }


def search(epoch, iterations, padding_limit, seed):
    rng = random.Random(seed)
    steps, ranks = epoch.steps, len(epoch.steps[0])

    def score(s):
        ratio = epoch.step_figures(steps[s])[1]
        return ratio + 20 * max(0.0, ratio - 1.08)

    scores = [score(s) for s in range(len(steps))]
    scale = sum(scores) / len(scores)
    for it in range(iterations):
        temperature = 0.0005 * scale * (1 - it / iterations) + 1e-12
        s, r = rng.randrange(len(steps)), rng.randrange(ranks)
        shape = steps[s][r]
        kind = rng.random()
        if kind < 0.5:  # a slot from this batch to another
            t, q = rng.randrange(len(steps)), rng.randrange(ranks)
            other = steps[t][q]
            if shape[0] < 2 or other is shape or other[0] == 0 or not epoch.fits(other[0] + 1, other[1]):
                continue
            i, j = epoch.index[shape[1]], epoch.index[other[1]]
            extra = other[1] - shape[1]
            if (j < i and not epoch.has_slack(j, i, 1)) or (extra > 0 and epoch.padding(extra) > padding_limit):
                continue
            undo = lambda: (shape.__setitem__(0, shape[0] + 1), other.__setitem__(0, other[0] - 1))
            shape[0] -= 1
            other[0] += 1
            on_keep = lambda: epoch.add_slack(min(i, j), max(i, j), -1 if j < i else 1)
            touched = {s, t}
        elif kind < 0.75:  # this batch's longest to a neighbouring length
            if shape[0] == 0:
                continue
            i = epoch.index[shape[1]]
            j = i + rng.choice((-3, -2, -1, 1, 2, 3))
            if j < 0 or j >= len(epoch.lengths) or epoch.longest_of[j] >= epoch.samples_of[j]:
                continue
            n, old, new = shape[0], shape[1], epoch.lengths[j]
            extra = n * (new - old)
            if not epoch.fits(n, new) or (j < i and not epoch.has_slack(j, i, n)) or (
                    extra > 0 and epoch.padding(extra) > padding_limit):
                continue
            undo = lambda: shape.__setitem__(1, old)
            shape[1] = new

            def on_keep():
                epoch.longest_of[i] -= 1
                epoch.longest_of[j] += 1
                epoch.add_slack(min(i, j), max(i, j), -n if j < i else n)
            touched = {s}
        elif kind < 0.85:  # this batch's longest lowered and a slot taken from another
            t, q = rng.randrange(len(steps)), rng.randrange(ranks)
            other = steps[t][q]
            if shape[0] == 0 or other is shape or other[0] < 2:
                continue
            i, o = epoch.index[shape[1]], epoch.index[other[1]]
            j = i - rng.choice((1, 2, 3, 5, 8, 13))
            if j < 0 or epoch.longest_of[j] >= epoch.samples_of[j]:
                continue
            n, old, new = shape[0], shape[1], epoch.lengths[j]
            # Slack changes only above both new longests: n + 1 slots now reach j, n
            # reached i, and the other batch's slot reached o.
            delta = {x: (n + 1) * (x <= j) - n * (x <= i) - (x <= o)
                     for x in range(min(j, o) + 1, max(i, o) + 1)}
            extra = (n + 1) * new - n * old - other[1]
            if not epoch.fits(n + 1, new) or any(epoch.slack[x] + d < 0 for x, d in delta.items()) or (
                    extra > 0 and epoch.padding(extra) > padding_limit):
                continue

            def undo():
                shape[0], shape[1] = n, old
                other[0] += 1
            shape[0], shape[1] = n + 1, new
            other[0] -= 1

            def on_keep():
                epoch.longest_of[i] -= 1
                epoch.longest_of[j] += 1
                for x, d in delta.items():
                    epoch.slack[x] += d
            touched = {s, t}
        else:  # two batches of different steps exchanged
            t, q = rng.randrange(len(steps)), rng.randrange(ranks)
            if t == s:
                continue
            extra = 0

            def undo():
                steps[s][r], steps[t][q] = steps[t][q], steps[s][r]
            undo()
            on_keep = lambda: None
            touched = {s, t}
        before = sum(scores[k] for k in touched)
        after = {k: score(k) for k in touched}
        change = sum(after.values()) - before
        if change <= 0 or rng.random() < math.exp(-change / temperature):
            for k, v in after.items():
                scores[k] = v
            epoch.slot_tokens += extra
            on_keep()
        else:
            undo()


def main():
    parser = plan_dump_parser(__doc__.splitlines()[0])
    parser.add_argument("--max-batch-size", type=int, default=0,
                        help="the plan's sample cap (its report's config.max_batch_size; 0: none)")
    parser.add_argument("--padding", type=float, default=0.019,
                        help="most padding share an epoch may reach")
    parser.add_argument("--iterations", type=int, default=200000, help="moves tried per epoch")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    per_sample = per_sample_cost(args.cost, args.quadratic_a)
    lengths = lengths_cut_to_budget(args, "plan_reshape")
    epochs = collections.defaultdict(lambda: collections.defaultdict(list))
    for epoch, step, samples, _ in checked_dump_batches(args, lengths, per_sample, "plan_reshape"):
        shape = [len(samples), max(lengths[i] for i in samples)] if samples else [0, 0]
        epochs[epoch][step].append(shape)
    budget = per_sample(args.tokens)
    cap = args.max_batch_size if args.max_batch_size > 0 else math.inf
    print("epoch  plan         mean max/mean  worst  epoch time (budgets)  useful share  padding")
    for e in sorted(epochs):
        steps = [epochs[e][s] for s in sorted(epochs[e])]
        try:
            epoch = Epoch(steps, lengths, per_sample, budget, cap)
        except ValueError as error:
            raise SystemExit(f"plan_reshape: epoch {e}: {error}")
        rows = [("as planned", figures(epoch, steps))]
        search(epoch, args.iterations, args.padding, args.seed + e)
        filled, ok = fill(epoch, lengths)
        if not ok:
            raise SystemExit(f"plan_reshape: epoch {e}: the searched shapes could not be filled (a bug)")
        rows.append(("reshaped", figures(epoch, filled)))
        for name, x in rows:
            print(f"{e:5d}  {name:<17} {x['mean']:.4f}  {x['worst']:.3f}  {x['time']:.3f}  "
                  f"{100 * x['useful']:.2f}%  {100 * x['padding']:.2f}%")


if __name__ == "__main__":
    main()
