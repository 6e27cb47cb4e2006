#!/usr/bin/env python3
"""Length distributions of shapes the real corpora do not have, for `evenfeed plan`.

  python3 bench/make_length_shapes.py OUTDIR

The corpora of make_length_corpora.py are documents of a Debian machine: long-tailed,
most lengths short. Training data also comes in other shapes, and a planner tuned on one
shape can fail on another, so the `shapes` sweep of plan_sweeps.py plans these too (added
2026-12-05, never used for tuning). One length per line, generated with a fixed seed:
  shape_packed.txt    100,000: 95% exactly 2,048 (pre-training text packed into chunks),
                      the rest uniform in 1-2,047 (each document's last chunk)
  shape_bimodal.txt   100,000: half log-normal around 64, half around 4,000 (short
                      prompts beside long documents), sigma 0.3 each
  shape_uniform.txt   100,000: uniform in 1-8,192
  shape_pareto.txt    100,000: Pareto with alpha 1.1 from 50 (a tail heavier than
                      log-normal: 1 in 1,000 above 26,000), at most 1,000,000
  shape_equal.txt     100,000: all 1,000
  shape_sft.txt       100,000: log-normal, median 300, sigma 1.2 (instruction-tuning
                      conversations)
  shape_small.txt     5,000: log-normal, median 500, sigma 1.0: at 64 ranks an epoch of
                      a few steps, where the report's bound and notes say what is possible"""
import math
import os
import random
import sys


def shapes(rng):
    n = 100000
    yield "packed", [2048 if rng.random() < 0.95 else rng.randint(1, 2047) for _ in range(n)]
    yield "bimodal", [rng.lognormvariate(math.log(64 if rng.random() < 0.5 else 4000), 0.3)
                      for _ in range(n)]
    yield "uniform", [rng.randint(1, 8192) for _ in range(n)]
    yield "pareto", [min(1000000, 50 * rng.paretovariate(1.1)) for _ in range(n)]
    yield "equal", [1000] * n
    yield "sft", [rng.lognormvariate(math.log(300), 1.2) for _ in range(n)]
    yield "small", [rng.lognormvariate(math.log(500), 1.0) for _ in range(5000)]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_length_shapes.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    for name, lengths in shapes(rng):
        path = os.path.join(out, "shape_%s.txt" % name)
        with open(path, "w") as f:
            f.write("".join("%d\n" % max(1, int(x)) for x in lengths))
        print("%s: %d lengths" % (path, len(lengths)))


if __name__ == "__main__":
    main()
