#!/usr/bin/env python3
"""The sweeps BENCHMARKS.md counts `evenfeed plan` against the issue's targets on.

  python3 bench/make_length_corpora.py /tmp/lc          # the corpora, once
  python3 bench/make_length_shapes.py /tmp/lc           # for --sweeps shapes
  python3 bench/plan_sweeps.py build/evenfeed /tmp/lc [--sweeps main,held,...]
      [--jobs 2] [--seed N] [--out rows.txt] [--compare old_rows.txt]

Each configuration is planned with the sweeps' command,

  evenfeed plan --lengths F --world-size W --tokens-per-rank T --oversize truncate
      --cost C --epochs 2 --no-baselines --json --dump D [extra flags]

(`--synthetic 200000` for the synthetic corpus; `--seed N` added where asked for, 0
otherwise, which the command's default gives the same plans as), and one row is printed per
configuration: whether it meets every target (plan_targets.py), its figures, the
report's bound and the md5 of its dump (the same md5 is the same plan). Then, per sweep, how many meet every target,
and for each row that misses, which targets and the report's bound. With --compare, the rows whose figures or plan
differ from an earlier run's output.

The sweeps (314 configurations; `held2`, `held3`, `shapes` and `smallsynth` are left out unless
asked for):
  main      the 120: code_files, changelog_entries, doc_paragraphs, doc_sentences and
            synthetic:200000 x both costs x W = 8, 64 x {8,192; 8,192 with
            --max-batch-size 64; 8,192 with 512; 4,096; 16,384; 32,768}
  held      html_pages and doc_files at the same 24 settings (48)
  otherW    code_files, changelog_entries, html_pages, doc_files and doc_paragraphs at
            W = 2, 3, 4, 16, 32, 128, 8,192 tokens, both costs (60)
  tokbound  the main corpora, quadratic, W = 8, 64, at 4,096, 8,192 and 16,384 tokens
            with --max-batch-tokens equal to the budget (30)
  small     the six corpora and synthetic:200000 at 1,024 and 2,048 tokens, both costs,
            W = 8, 64 (56)
  held2     java_sources, js_sources and perl_sources at the 120's 24 settings (72)
  held3     sdk_sources and markup_docs (make_length_corpora.py, added 2026-12-06) at the
            120's 24 settings (48)
  shapes    the seven shapes of make_length_shapes.py x both costs x W = 8, 64 x 4,096,
            8,192, 16,384 and 32,768 tokens (112)
  smallsynth  small synthetic corpora, 2,000, 5,000, 10,000 and 20,000 samples
            (`--synthetic N`) x both costs x W = 8, 64 x 4,096, 8,192 and 16,384 tokens (48)"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from plan_targets import meets_targets

MAIN = ["code_files", "changelog_entries", "doc_paragraphs", "doc_sentences", "synthetic:200000"]
SETTINGS = [(8192, ""), (8192, "--max-batch-size 64"), (8192, "--max-batch-size 512"), (4096, ""),
            (16384, ""), (32768, "")]
COSTS = ["linear", "quadratic"]


def at_settings(sweep, corpora):
    return [(sweep, c, cost, w, t, x) for c in corpora for cost in COSTS for w in (8, 64)
            for t, x in SETTINGS]


def configurations(sweeps):
    rows = []
    if "main" in sweeps:
        rows += at_settings("main", MAIN)
    if "held" in sweeps:
        rows += at_settings("held", ["html_pages", "doc_files"])
    if "otherW" in sweeps:
        rows += [("otherW", c, cost, w, 8192, "")
                 for c in ["code_files", "changelog_entries", "html_pages", "doc_files", "doc_paragraphs"]
                 for cost in COSTS for w in (2, 3, 4, 16, 32, 128)]
    if "tokbound" in sweeps:
        rows += [("tokbound", c, "quadratic", w, t, "--max-batch-tokens %d" % t)
                 for c in MAIN for w in (8, 64) for t in (4096, 8192, 16384)]
    if "small" in sweeps:
        rows += [("small", c, cost, w, t, "") for c in MAIN + ["html_pages", "doc_files"]
                 for cost in COSTS for w in (8, 64) for t in (1024, 2048)]
    if "held2" in sweeps:
        rows += at_settings("held2", ["java_sources", "js_sources", "perl_sources"])
    if "held3" in sweeps:
        rows += at_settings("held3", ["sdk_sources", "markup_docs"])
    if "smallsynth" in sweeps:
        rows += [("smallsynth", "synthetic:%d" % n, cost, w, t, "") for n in (2000, 5000, 10000, 20000)
                 for cost in COSTS for w in (8, 64) for t in (4096, 8192, 16384)]
    if "shapes" in sweeps:
        rows += [("shapes", "shape_" + c, cost, w, t, "")
                 for c in ["packed", "bimodal", "uniform", "pareto", "equal", "sft", "small"]
                 for cost in COSTS for w in (8, 64) for t in (4096, 8192, 16384, 32768)]
    return rows


def key(row):
    return "|".join(str(v) for v in row)


def plan_row(binary, corpora, row, seed=0):
    sweep, corpus, cost, world, tokens, extra = row
    source = (["--synthetic", corpus.split(":")[1]] if corpus.startswith("synthetic:")
              else ["--lengths", os.path.join(corpora, corpus + ".txt")])
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "plan.jsonl")
        cmd = [binary, "plan", *source, "--world-size", str(world), "--tokens-per-rank", str(tokens),
               "--oversize", "truncate", "--cost", cost, "--epochs", "2", "--no-baselines", "--json",
               "--dump", dump, "--seed", str(seed), *extra.split()]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return "%s | ERROR %s" % (key(row), done.stderr.strip())
        with open(dump, "rb") as f:
            md5 = hashlib.md5(f.read()).hexdigest()[:12]
    report = json.loads(done.stdout)
    config, e = report["config"], report["evenfeed"]
    imbalance = e["imbalance_" + config["cost"]]
    pairs = e["repeated_pair_share"] or 0
    meets = meets_targets(report)
    return ("%s | %s pad=%.2f mean=%.4f p99=%.3f pairs=%.1f lag=%.3f useful=%.3f steps=%s cap=%d "
            "bound=%.3f md5=%s" % (key(row), "OK" if meets else "MISS", 100 * e["padding_waste"],
                                   imbalance["mean"], imbalance["p99"], 100 * pairs,
                                   e["lag1_batch_mean_length"], 100 * e["useful_share_" + config["cost"]],
                                   e["steps_per_epoch"], config["max_batch_size"],
                                   config.get("worst_step_bound", 0), md5))


def fields(row):
    """A printed row's `name=value` figures."""
    return dict(f.split("=", 1) for f in row.partition(" | ")[2].split() if "=" in f)


def missed(row):
    """The targets a row's figures miss, as `name figure`, from its printed fields (drops,
    duplicates and step counts are not printed: every row so far meets them, and a row
    missing one says MISS with none of these named)."""
    f = fields(row)
    checks = [("padding", "pad", 2.0, "%s%%"), ("mean", "mean", 1.03, "%s"), ("p99", "p99", 1.10, "%s"),
              ("pairs", "pairs", 10.0, "%s%%")]
    out = ["%s %s" % (name, fmt % f[field]) for name, field, most, fmt in checks if float(f[field]) > most]
    if abs(float(f["lag"])) > 0.2:
        out.append("lag-1 %s" % f["lag"])
    return out


def print_misses(rows):
    for row in rows:
        if " | MISS " in row:
            print("miss %s: %s (bound %s)" % (row.partition(" | ")[0], ", ".join(missed(row)) or "?",
                                              fields(row)["bound"]))


def compare(rows, old_file):
    old = {}
    with open(old_file) as f:
        for line in f:
            k, _, rest = line.rstrip("\n").partition(" | ")
            old[k] = rest
    changed = 0
    for line in rows:
        k, _, rest = line.partition(" | ")
        if k in old and old[k] != rest:
            changed += 1
            print("changed %s\n  was %s\n  now %s" % (k, old[k], rest))
    print("%d rows changed of %d compared" % (changed, sum(1 for line in rows if line.partition(" | ")[0] in old)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("corpora")
    parser.add_argument("--sweeps", default="main,held,otherW,tokbound,small")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out")
    parser.add_argument("--compare")
    parser.add_argument("--seed", type=int, default=0, help="passed to evenfeed plan (default 0)")
    args = parser.parse_args()
    sweeps = args.sweeps.split(",")
    known = ["main", "held", "otherW", "tokbound", "small", "held2", "held3", "shapes", "smallsynth"]
    unknown = [w for w in sweeps if w not in known]
    if unknown:
        sys.exit("plan_sweeps: --sweeps %s: no such sweep; pass some of %s, comma-separated"
                 % (",".join(unknown), ",".join(known)))
    todo = configurations(sweeps)
    missing = sorted({os.path.join(args.corpora, c + ".txt") for _, c, *_ in todo
                      if not c.startswith("synthetic:")
                      and not os.path.exists(os.path.join(args.corpora, c + ".txt"))})
    if missing:
        sys.exit("plan_sweeps: %s: no such file; make the corpora first (python3 "
                 "bench/make_length_corpora.py %s; bench/make_length_shapes.py for the shapes), or "
                 "leave out the sweeps that need it" % (", ".join(missing), args.corpora))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        rows = sorted(pool.map(lambda r: plan_row(args.binary, args.corpora, r, args.seed), todo))
    text = "\n".join(rows) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for sweep in sweeps:
        mine = [r for r in rows if r.startswith(sweep + "|")]
        print("%s: %d of %d meet every target" % (sweep, sum(" | OK " in r for r in mine), len(mine)))
    print_misses(rows)
    if args.compare:
        compare(rows, args.compare)


if __name__ == "__main__":
    main()
