#!/usr/bin/env python3
"""Log-normal document lengths, one per line, for `evenfeed plan --lengths`.

  python3 bench/make_lognormal_lengths.py N MEDIAN SIGMA SEED > lengths.txt

Each length is max(1, int(MEDIAN * exp(SIGMA * z))), z a standard normal drawn by
Python's random.Random(SEED): the same file on every machine. Whole documents of a small
corpus (source files: median about 215 words, sigma about 1.7) look like this; they were
used in docs/plan_history.md to check rules found on the real corpora against corpora that
were not used to find them."""
import math
import random
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: make_lognormal_lengths.py N MEDIAN SIGMA SEED")
    n, median, sigma, seed = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    out = sys.stdout
    for _ in range(n):
        out.write("%d\n" % max(1, int(median * math.exp(sigma * rng.gauss(0, 1)))))


if __name__ == "__main__":
    main()
