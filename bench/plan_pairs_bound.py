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
n (n - g) / 2g pairs (convexity), and pairs of different lengths may all be new. The
larger of that count taken from either epoch, summed over lengths and batches, over
epoch 0's pairs. Lengths longer than --truncate count as --truncate (as with
`--oversize truncate`)."""
import argparse
import collections
import json


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lengths")
    parser.add_argument("dump")
    parser.add_argument("--truncate", type=int, default=None)
    args = parser.parse_args()
    lengths = [int(line) for line in open(args.lengths) if line.strip()]
    if args.truncate:
        lengths = [min(length, args.truncate) for length in lengths]
    batches = {0: [], 1: []}
    for line in open(args.dump):
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
    # Per length: how many of its samples each batch holds, in each epoch.
    per_length = collections.defaultdict(lambda: (collections.Counter(), collections.Counter()))
    for e in (0, 1):
        for b, samples in enumerate(batches[e]):
            for s in samples:
                per_length[lengths[s]][e][b] += 1
    forced = 0
    for first, second in per_length.values():
        spread = lambda counts, g: sum(n * (n - g) / (2 * g) for n in counts.values() if n > g)
        forced += max(spread(second, len(first)), spread(first, len(second)))
    print(f"pairs batched together in epoch 0: {pairs:.0f}")
    print(f"batched together again in epoch 1: {100 * again / pairs:.1f}%")
    print(f"forced by the batches' lengths (lower bound): {100 * forced / pairs:.1f}%")


if __name__ == "__main__":
    main()
