#!/usr/bin/env python3
"""One Markdown table row from `evenfeed plan --json` on stdin, for the bench scripts.

  evenfeed plan ... --json | python3 bench/plan_row.py SOURCE [--steps] [EXTRA...]

Columns: corpus (SOURCE's file name without extension), cost, W, the EXTRA values as
given, steps per epoch (with --steps), padding, imbalance mean / p99 under the cost in
use, lag-1, pairs again, and whether every target of issue 3 is met (plan_targets.py).
With --verdict,
only the last of those and the largest batch in padded tokens, as two cells."""
import json
import os
import sys

from plan_targets import meets_targets

args = sys.argv[1:]
source = args.pop(0)
steps = "--steps" in args
verdict = "--verdict" in args
extra = [a for a in args if a not in ("--steps", "--verdict")]
j = json.load(sys.stdin)
c, e = j["config"], j["evenfeed"]
q = e["imbalance_" + c["cost"]]
ok = meets_targets(j)
if verdict:  # just two cells: every target met, and the largest batch in padded tokens
    print("%s | %d |" % ("yes" if ok else "no", e["largest_batch_tokens"]))
    sys.exit(0)
cells = [os.path.basename(source).rsplit(".", 1)[0], c["cost"], str(c["world_size"])] + extra
if steps:
    cells.append(str(e["steps_per_epoch"][0]))
cells += ["%.2f%%" % (100 * e["padding_waste"]), "%.3f / %.3f" % (q["mean"], q["p99"]),
          "%.3f" % e["lag1_batch_mean_length"], "%.1f%%" % (100 * e["repeated_pair_share"]),
          "yes" if ok else "no"]
print("| " + " | ".join(cells) + " |")
