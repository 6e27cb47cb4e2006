#!/usr/bin/env python3
"""How much of a plan's rank-time does useful work, from its dump.

  evenfeed plan --lengths FILE ... --dump plan.jsonl
  python3 bench/plan_time_share.py FILE plan.jsonl --world-size W --cost linear|quadratic \
      [--truncate T] [--quadratic-a 2048]

A step lasts as long as its dearest batch (every rank waits for it at the all-reduce),
so a plan's time is the sum over steps of the dearest batch's cost, and W times that
is the rank-time it occupies. Prints the time, the share of the rank-time spent on the
samples' own cost (useful) and on their padded cost (useful plus padding); the rest is
idle. max/mean per step can fall without the time falling: padding a light batch with
samples taken from another step's cheaper batches turns idle time into padding. Lengths
longer than --truncate count as --truncate (as with `--oversize truncate`)."""
import argparse
import collections

from plan_dump import dump_batches, per_sample_cost, read_lengths


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lengths")
    ap.add_argument("dump")
    ap.add_argument("--world-size", type=int, required=True)
    ap.add_argument("--cost", choices=["linear", "quadratic"], required=True)
    ap.add_argument("--truncate", type=int, default=0)
    ap.add_argument("--quadratic-a", type=float, default=2048.0)
    args = ap.parse_args()

    lengths = read_lengths(args.lengths, args.truncate)
    per_sample = per_sample_cost(args.cost, args.quadratic_a)

    dearest = collections.defaultdict(float)
    useful = padded = 0.0
    for epoch, step, samples, cost in dump_batches(args.dump, lengths, per_sample):
        if not samples:
            continue
        padded += cost
        useful += sum(per_sample(lengths[i]) for i in samples)
        key = (epoch, step)
        dearest[key] = max(dearest[key], cost)
    time = sum(dearest.values())
    rank_time = args.world_size * time
    print(f"steps {len(dearest)}  time {time:.6g} cost units  "
          f"useful share {useful / rank_time:.4f}  padded share {padded / rank_time:.4f}")


if __name__ == "__main__":
    main()
