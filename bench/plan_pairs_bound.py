#!/usr/bin/env python3
"""How many of a plan's re-batched pairs its batches force, and how many it has.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_pairs_bound.py FILE plan.jsonl [--truncate T]

Reads the dump's epochs 0 and 1. Prints the share of the sample pairs batched together
in epoch 0 that are batched together again in epoch 1 (what `evenfeed plan` reports),
and a lower bound on that share for any plan whose batches hold, in both epochs, the
same number of samples of each length as this plan's (so the same costs, padding and
balance): for one length, the n samples of it in an epoch-1 batch, spread as evenly as
possible over the g epoch-0 batches that hold that length, still meet in at least
n (n - g) / 2g pairs (convexity). The same holds for any band of lengths (pairs within
the band; pairs across bands may all be new), so any partition of the lengths into
bands gives a bound: the best of bands of several widths is reported (the larger count
from either epoch, summed over bands and batches, over epoch 0's pairs). Lengths
longer than --truncate count as --truncate (as with `--oversize truncate`)."""
import argparse
import collections
import json
import math


def spread(counts, groups):
    """The fewest pairs among `counts` (items per batch of one epoch) that share a batch
    of the other epoch too, when the items lie in `groups` batches there: a batch's n
    items spread evenly over the groups still meet in n (n - groups) / 2 groups pairs."""
    return sum(n * (n - groups) / (2 * groups) for n in counts.values() if n > groups)


def band_of(ratio):
    """Maps a length to its band: bands whose ends differ by `ratio` (1: each length
    alone; infinity: one band)."""
    if ratio == float("inf"):
        return lambda length: 0
    if ratio == 1.0:
        return lambda length: length
    return lambda length: int(math.log(length) / math.log(ratio))


def band_bound(batches, lengths, band):
    """The bound for one partition of the lengths into bands (`band` maps a length to
    its band): pairs within a band, the larger count from either epoch, summed."""
    per_band = collections.defaultdict(lambda: (collections.Counter(), collections.Counter()))
    for e in (0, 1):
        for b, samples in enumerate(batches[e]):
            for s in samples:
                per_band[band(lengths[s])][e][b] += 1
    return sum(max(spread(second, len(first)), spread(first, len(second)))
               for first, second in per_band.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lengths")
    parser.add_argument("dump")
    parser.add_argument("--truncate", type=int, default=None)
    args = parser.parse_args()
    try:
        lengths = [int(line) for line in open(args.lengths) if line.strip()]
        dump_lines = open(args.dump).readlines()
    except (OSError, ValueError) as error:
        raise SystemExit(f"plan_pairs_bound: {error}; pass a lengths file (one integer a "
                         "line) and an `evenfeed plan --dump` file")
    if args.truncate:
        lengths = [min(length, args.truncate) for length in lengths]
    batches = {0: [], 1: []}
    for line in dump_lines:
        row = json.loads(line)
        if row["epoch"] in batches and row["samples"]:
            batches[row["epoch"]].append(row["samples"])
    if not batches[0] or not batches[1]:
        raise SystemExit(f"{args.dump}: needs epochs 0 and 1 (plan with --epochs 2)")
    batch_of = {e: {s: b for b, samples in enumerate(batches[e]) for s in samples} for e in (0, 1)}
    pairs = sum(len(b) * (len(b) - 1) / 2 for b in batches[0])
    again = 0
    for samples in batches[0]:
        mates = collections.Counter(batch_of[1][s] for s in samples)
        again += sum(n * (n - 1) / 2 for n in mates.values())
    # Any partition of the lengths into bands gives a bound (pairs within a band, over
    # bands); exact lengths lose every pair of unequal lengths, wide bands spread over
    # more batches. The best of a few band widths (ratio of a band's ends) is reported.
    forced, best_ratio = 0, None
    for ratio in (1.0, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 4.0, float("inf")):
        count = band_bound(batches, lengths, band_of(ratio))
        if count > forced:
            forced, best_ratio = count, ratio
    print(f"pairs batched together in epoch 0: {pairs:.0f}")
    print(f"batched together again in epoch 1: {100 * again / pairs:.1f}%")
    print(f"forced by the batches' lengths (lower bound): {100 * forced / pairs:.1f}% "
          f"(length bands of ratio {best_ratio})")


if __name__ == "__main__":
    main()
