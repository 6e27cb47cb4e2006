"""Reading an `evenfeed plan --dump` beside the lengths it was planned from, for the
bench/ scripts that recompute a plan's figures (plan_time_share.py, plan_step_shares.py,
plan_reshape.py, plan_block_swaps.py, plan_pairs_by_length.py, plan_sample_exchanges.py,
plan_lump_spread.py, plan_step_cuts.py, plan_step_regroup.py, plan_dear_regroup.py,
plan_pair_split.py, plan_exact_recut.py).

A batch costs as the planner costs it (bucketing/cost_model.h): n x f(longest), with
f(L) = L (linear) or a L + L^2 (quadratic)."""
import argparse
import collections
import json
import math


def read_lengths(path, truncate=0):
    """One integer a line; lengths longer than `truncate` (when > 0) count as `truncate`,
    as with `evenfeed plan --oversize truncate`."""
    with open(path) as f:
        lengths = [int(line) for line in f if line.strip()]
    return [min(n, truncate) for n in lengths] if truncate > 0 else lengths


def per_sample_cost(cost, a=2048.0):
    """f(L) of the cost model `cost` ("linear" or "quadratic", with coefficient `a`)."""
    if cost == "linear":
        return float
    return lambda n: a * n + float(n) * n


def dump_batches(path, lengths, per_sample):
    """Yields (epoch, step, samples, cost) for each line of the dump, ranks without a
    batch included (cost 0)."""
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            samples = row["samples"]
            cost = len(samples) * per_sample(max(lengths[i] for i in samples)) if samples else 0.0
            yield row["epoch"], row["step"], samples, cost


def plan_dump_parser(description):
    """Arguments of a script over a dump and its lengths: LENGTHS DUMP --tokens T
    [--cost linear|quadratic] [--quadratic-a A], given as the plan was made."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("lengths")
    parser.add_argument("dump")
    parser.add_argument("--tokens", type=int, required=True, help="--tokens-per-rank of the plan")
    parser.add_argument("--cost", choices=["linear", "quadratic"], default="linear")
    parser.add_argument("--quadratic-a", type=float, default=2048.0,
                        help="--quadratic-a of the plan")
    return parser


def lengths_cut_to_budget(args, tool):
    """The lengths file of `args`, each cut to --tokens; one error line naming `tool`
    and exit 1 when it cannot be read."""
    try:
        return read_lengths(args.lengths, args.tokens)
    except (OSError, ValueError) as error:
        raise SystemExit(f"{tool}: {error}; pass a lengths file, one integer a line")


def checked_dump_batches(args, lengths, per_sample, tool):
    """dump_batches over args.dump, a dump that cannot be read, or that does not match
    the lengths, ending the script with one error line naming `tool` (exit 1)."""
    try:
        yield from dump_batches(args.dump, lengths, per_sample)
    except OSError as error:
        raise SystemExit(f"{tool}: {error}; pass an `evenfeed plan --dump` file")
    except (IndexError, KeyError, TypeError, ValueError) as error:
        raise SystemExit(f"{tool}: {args.dump}: {error}; is it the dump of a plan of "
                         f"{args.lengths}?")


def checked_dump_steps(args, lengths, per_sample, tool):
    """The dump's batches by step: {(epoch, step): [samples of each rank, in rank
    order]}, read as checked_dump_batches reads them."""
    steps = collections.defaultdict(list)
    for epoch, step, samples, _ in checked_dump_batches(args, lengths, per_sample, tool):
        steps[(epoch, step)].append(list(samples))
    return steps


def ratio(costs):
    """max/mean of one step's per-rank costs (1 when they cost nothing)."""
    total = sum(costs)
    return max(costs) * len(costs) / total if total > 0 else 1.0


def p99(values):
    """The 99th percentile as `evenfeed plan` reports it: the ceil(0.99 n)-th smallest."""
    values = sorted(values)
    return values[max(0, math.ceil(0.99 * len(values)) - 1)]


class CutCosts:
    """Batch costs as shares of the budget's cost, and plain length-order cuts under a
    sample cap, for the scripts that cut a dump's steps again."""

    def __init__(self, lengths, tokens, cost, cap):
        f = per_sample_cost(cost)
        self.lengths, self.cap = lengths, cap or len(lengths)
        self.single = [f(n) / f(tokens) for n in lengths]

    def batch(self, b):
        return len(b) * max(self.single[i] for i in b) if b else 0.0

    def slots(self, b):
        return len(b) * max(self.lengths[i] for i in b) if b else 0

    def dearest(self, step):
        return max(self.batch(b) for b in step)

    def ratio(self, step):
        return ratio([self.batch(b) for b in step])

    def longest_first(self, samples):
        return sorted(samples, key=lambda i: -self.lengths[i])

    def cut_at(self, samples, level):
        """`samples` (longest first) cut in order, each batch as many as fit `level`."""
        batches, current = [], []
        for i in samples:
            if current and ((len(current) + 1) * self.single[current[0]] > level + 1e-12
                            or len(current) >= self.cap):
                batches.append(current)
                current = []
            current.append(i)
        return batches + ([current] if current else [])


def dump_epochs(args, lengths, tool):
    """The dump's steps by epoch: {epoch: [[samples of each rank] of each step]}, read as
    checked_dump_steps reads them."""
    by_step = checked_dump_steps(args, lengths, per_sample_cost(args.cost), tool)
    epochs = collections.defaultdict(list)
    for (epoch, _), batches in sorted(by_step.items()):
        epochs[epoch].append(batches)
    return epochs


def cut_figures(costs, epochs, tool):
    """Padding, imbalance mean and p99 and time (the sum of each step's dearest batch, in
    budgets) of `epochs`, as `evenfeed plan` computes them; ends the script with one
    error line naming `tool` where an epoch does not serve every sample once."""
    ratios, slots, tokens, time = [], 0, 0, 0.0
    for epoch, steps in sorted(epochs.items()):
        served = collections.Counter(i for s in steps for b in s for i in b)
        if len(served) != len(costs.lengths) or max(served.values()) != 1:
            raise SystemExit(f"{tool}: epoch {epoch} does not serve every sample once")
        for s in steps:
            ratios.append(costs.ratio(s))
            time += costs.dearest(s)
            slots += sum(costs.slots(b) for b in s)
            tokens += sum(costs.lengths[i] for b in s for i in b)
    return {"padding": round((slots - tokens) / slots, 4),
            "mean": round(sum(ratios) / len(ratios), 4), "p99": round(p99(ratios), 4),
            "time_budgets": round(time, 3), "worst_steps": [round(r, 3) for r in sorted(ratios)[-4:]]}


def run_cut_script(doc, tool, change_epoch):
    """The main of a script over LENGTHS DUMP --tokens T --cost C --cap N that changes
    each epoch's steps with `change_epoch(costs, steps, width)` and prints the figures
    before and after (cut_figures)."""
    parser = plan_dump_parser(doc.split("\n\n")[0])
    parser.add_argument("--cap", type=int, required=True,
                        help="the plan's sample cap (the report's max_batch_size; 0: none)")
    args = parser.parse_args()
    lengths = lengths_cut_to_budget(args, tool)
    costs = CutCosts(lengths, args.tokens, args.cost, args.cap)
    epochs = dump_epochs(args, lengths, tool)
    width = len(epochs[0][0])
    print("before", json.dumps(cut_figures(costs, epochs, tool)))
    after = {e: change_epoch(costs, [list(s) for s in steps], width) for e, steps in epochs.items()}
    print("after ", json.dumps(cut_figures(costs, after, tool)))
