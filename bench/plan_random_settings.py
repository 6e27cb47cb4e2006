#!/usr/bin/env python3
"""`evenfeed plan` over random settings: each run must plan every sample once an epoch
with equal step counts, or refuse in one line; runs past the time limit are listed.

  python3 bench/plan_random_settings.py build/evenfeed /tmp/lc [--seed 1] [--runs 60]
      [--limit 120]

World sizes 1 to 4,096, budgets 1 to 10^6 tokens, both costs, with sample caps, token
bounds, windows, orders, noise, level tolerances, pairs targets and resumes drawn at
random, on the corpora of bench/make_length_corpora.py and make_length_shapes.py and on
--synthetic ones (docs/plan_history.md, forty-first session). Prints one line per run
that refused (`err`), broke the promise (`ISSUE`), failed otherwise (`BAD EXIT`) or ran
past the limit (`TIMEOUT`), then how many did the last three; exits 1 if any did."""
import argparse
import json
import os
import random
import subprocess
import tempfile
import time

CORPORA = ["code_files", "changelog_entries", "doc_paragraphs", "js_sources", "perl_sources",
           "markup_docs", "shape_small", "shape_pareto", "java_sources"]


def draw(rng, corpora, dump):
    args = ["plan", "--oversize", "truncate", "--no-baselines", "--json"]
    if rng.random() < 0.2 or not corpora:
        args += ["--synthetic", str(rng.choice([1, 2, 3, 7, 63, 64, 65, 500, 3000, 50000]))]
    else:
        args += ["--lengths", rng.choice(corpora)]
    t = rng.choice([1, 7, 64, 512, 1000, 2048, 4096, 8192, 16384, 32768, 131072, 10**6])
    args += ["--world-size", str(rng.choice([1, 2, 3, 5, 8, 13, 64, 100, 256, 1000, 4096])),
             "--tokens-per-rank", str(t), "--cost", rng.choice(["linear", "quadratic"]),
             "--epochs", str(rng.choice([1, 2, 3]))]
    if rng.random() < 0.3:
        args += ["--seed", str(rng.randrange(10**9))]
    if rng.random() < 0.2:
        args += ["--max-batch-size", str(rng.choice([1, 2, 3, 16, 64, 1000]))]
    if rng.random() < 0.15:
        args += ["--max-batch-tokens", str(rng.choice([t, 2 * t, max(1, t // 2)]))]
    if rng.random() < 0.15:
        args += ["--window", str(rng.choice([1, 2, 64, 1000, 100000]))]
    if rng.random() < 0.15:
        args += ["--order", rng.choice(["keyed", "full", "shard-blocks", "sequential"])]
    if rng.random() < 0.1:
        args += ["--noise", str(rng.choice([0, 0.5, 3]))]
    if rng.random() < 0.1:
        args += ["--level-tolerance", str(rng.choice([0, 0.01, 0.3]))]
    if rng.random() < 0.1:
        args += ["--pairs-target", str(rng.choice([0, 0.01, 0.5]))]
    if rng.random() < 0.15:
        args += ["--resume-at-step", str(rng.choice([0, 1, 3, 50])),
                 "--resume-world-size", str(rng.choice([1, 3, 8, 64]))]
    if rng.random() < 0.3:
        args += ["--dump", dump]
    return args


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("evenfeed")
    p.add_argument("corpora_dir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=60)
    p.add_argument("--limit", type=float, default=120, help="seconds a run may take")
    a = p.parse_args()
    corpora = [f for c in CORPORA if os.path.exists(f := os.path.join(a.corpora_dir, c + ".txt"))]
    rng = random.Random(a.seed)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.runs):
            args = draw(rng, corpora, os.path.join(tmp, "plan.jsonl"))
            shown = " ".join(args)
            start = time.time()
            try:
                run = subprocess.run([a.evenfeed] + args, capture_output=True, text=True,
                                     timeout=a.limit)
            except subprocess.TimeoutExpired:
                print("TIMEOUT", shown)
                failed += 1
                continue
            seconds = time.time() - start
            if run.returncode != 0:
                lines = run.stderr.strip().splitlines()
                if run.returncode > 0 and len(lines) == 1 and "error" in lines[0]:
                    print("err %.1f s %s | %s" % (seconds, shown, lines[0][:160]))
                else:
                    print("BAD EXIT", run.returncode, shown, "|", run.stderr[-300:])
                    failed += 1
                continue
            ours = json.loads(run.stdout)["evenfeed"]
            if (any(ours["dropped_per_epoch"]) or any(ours["duplicated_per_epoch"])
                    or not ours["equal_step_counts_across_ranks"]):
                print("ISSUE", shown)
                failed += 1
    print("runs that broke the promise, failed or ran past %g s: %d of %d" % (a.limit, failed, a.runs))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
