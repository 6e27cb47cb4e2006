#!/usr/bin/env python3
"""Where a plan's re-batched pairs are: by the length of their batch's longest sample.

  evenfeed plan --lengths FILE ... --epochs 2 --dump plan.jsonl
  python3 bench/plan_pairs_by_length.py FILE plan.jsonl [--truncate T]

For each power-of-two band of the longest sample of epoch 0's batches: the share of
epoch 0's sample pairs that lie in such batches, the share of those batched together
again in epoch 1, and how many points of the report's repeated pair share they make.
A batch of n samples holds n (n - 1) / 2 pairs, so large batches of short samples
weigh most; a sample cap that doubles them about doubles their pairs. Lengths longer
than --truncate count as --truncate (as with `--oversize truncate`)."""
import argparse
import collections

from plan_dump import checked_dump_batches, per_sample_cost, read_lengths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lengths")
    parser.add_argument("dump")
    parser.add_argument("--truncate", type=int, default=0)
    args = parser.parse_args()
    try:
        lengths = read_lengths(args.lengths, args.truncate)
    except (OSError, ValueError) as error:
        raise SystemExit(f"plan_pairs_by_length: {error}; pass a lengths file, one integer a line")
    batches = collections.defaultdict(list)
    for epoch, _, samples, _ in checked_dump_batches(args, lengths, per_sample_cost("linear"),
                                                     "plan_pairs_by_length"):
        if samples:
            batches[epoch].append(samples)
    batch_next = {s: k for k, b in enumerate(batches[1]) for s in b}
    pairs, again = collections.Counter(), collections.Counter()
    for b in batches[0]:
        band = max(lengths[s] for s in b).bit_length() - 1
        pairs[band] += len(b) * (len(b) - 1) // 2
        mates = collections.Counter(batch_next[s] for s in b)
        again[band] += sum(n * (n - 1) // 2 for n in mates.values())
    total = sum(pairs.values())
    print("all bands: %d pairs, %.1f%% batched together again" % (total, 100 * sum(again.values()) / total))
    print("| longest sample | share of pairs | again within the band | points of the share |")
    print("|---|---|---|---|")
    for band in sorted(pairs):
        if pairs[band] == 0:
            continue
        print("| %d-%d | %.1f%% | %.1f%% | %.2f |" % (1 << band, (2 << band) - 1, 100 * pairs[band] / total,
                                                   100 * again[band] / pairs[band], 100 * again[band] / total))


if __name__ == "__main__":
    main()
