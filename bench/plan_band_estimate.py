#!/usr/bin/env python3
"""How level an epoch of few steps could be if its other samples were perfectly fluid:
an optimistic estimate (not a bound), the analysis behind docs/plan_history.md's
forty-seventh session; nothing here is built into the planner.

  python3 bench/plan_band_estimate.py FILE --world-size W --tokens T --cost quadratic
      [--cap N] [--plan BIN]

Samples that no two can share a batch ("singles": two cost more than the budget) each
take a rank alone. Everything else is treated as fluid: it can be cut into batches of
any cost up to a level, with no padding and no grain, except that under a sample cap N
a fluid sample of length l reaches only levels up to N x f(l). A step then holds a band
of singles of like cost, contiguous in cost order, and W - k fluid batches at the level
of its dearest single; fluid left over makes steps of its own, level by construction
(as many as its mass at the budget needs, or its count at the cap).
A dynamic program over the bands (singles in cost order, fluid spent in 1/400ths)
chooses the bands that minimise the mean of the steps' max/mean, spending the fluid
that reaches each level on the dearest levels first.

What it leaves out is what the planner has to live with: mid-length samples are coarse
(a batch of two or three of them misses a level by up to a third), batches pad, pairs
must not repeat from epoch to epoch, and a sample cap chosen for the pairs keeps short
samples from reaching high levels in full. So the estimate is a floor for plans of that
kind only; where it sits far below the planner's figure, the gap is in those grains,
not in the lengths. With --plan BIN the planner's own mean for the same settings
(`evenfeed plan ... --epochs 1`) is printed beside it, and the estimate takes the cap
the planner chose from the data unless --cap is given. With --realise NEAR the bands
are also built as a prototype did (realise(), below: worse than the planner).
"""
import argparse
import json
import math
import subprocess
import sys

QUANTA = 400


def cost_fn(kind, a=2048.0):
    return (lambda l: a * l + l * l) if kind == "quadratic" else (lambda l: float(l))


def estimate(lengths, world, tokens, kind, cap):
    f = cost_fn(kind)
    budget = f(tokens)
    lengths = [min(l, tokens) for l in lengths]
    singles = sorted((f(l) / budget for l in lengths if 2 * f(l) > budget), reverse=True)
    fluid = sorted((l for l in lengths if 2 * f(l) <= budget), reverse=True)
    fluid_mass = sum(f(l) / budget for l in fluid)
    quantum = fluid_mass / QUANTA if fluid_mass > 0 else 1.0

    def reachable(level):  # fluid mass, in quanta, whose samples reach `level` at the cap
        if cap is None:
            return QUANTA
        mass = sum(f(l) / budget for l in fluid if cap * f(l) / budget >= level)
        return math.floor(mass / quantum + 1e-9)

    n = len(singles)
    prefix = [0.0]
    for c in singles:
        prefix.append(prefix[-1] + c)
    reach = [reachable(c) for c in singles]
    # best[i][u]: {steps: least sum of max/mean} after the first i singles, u quanta spent
    best = [dict() for _ in range(n + 1)]  # each value (total, where it came from)
    best[0][0] = {0: (0.0, None)}
    for i in range(n):
        level = singles[i] if n else 0
        for used, by_steps in best[i].items():
            for k in range(1, min(world, n - i) + 1):
                need = (world - k) * level
                quanta = math.ceil(need / quantum - 1e-9)
                if used + quanta > reach[i]:
                    continue
                ratio = level * world / (prefix[i + k] - prefix[i] + need)
                into = best[i + k].setdefault(used + quanta, {})
                for steps, (total, _) in by_steps.items():
                    if total + ratio < into.get(steps + 1, (math.inf,))[0]:
                        into[steps + 1] = (total + ratio, (i, used, steps))
    # The fluid the bands leave is the shortest (they spend the longest first): it makes
    # steps enough for its mass at the budget and, under a cap, for its count.
    ascending = [f(l) / budget for l in reversed(fluid)]

    def fluid_steps_for(left):
        count, mass = 0, 0.0
        while count < len(ascending) and mass + ascending[count] <= left + 1e-9:
            mass += ascending[count]
            count += 1
        by_count = count / (cap * world) if cap else 0
        return math.ceil(max(left / world, by_count) - 1e-9) if left > 1e-9 else 0

    answer = None
    for used, by_steps in best[n].items():
        fluid_steps = fluid_steps_for(fluid_mass - used * quantum)
        for steps, (total, _) in by_steps.items():
            mean = (total + fluid_steps) / (steps + fluid_steps)
            if answer is None or mean < answer[0]:
                answer = (mean, steps, fluid_steps, used)
    bands = []  # (first, end) of each band's singles, dearest first
    if answer:
        i, used, steps = n, answer[3], answer[1]
        while i > 0:
            _, (i0, used0, steps0) = best[i][used][steps]
            bands.append((i0, i))
            i, used, steps = i0, used0, steps0
        bands.reverse()
    work = (fluid_mass + sum(singles)) / world
    return {"singles": n, "work_steps": work, "mean": answer[0] if answer else 1.0,
            "band_steps": answer[1] if answer else 0, "fluid_steps": answer[2] if answer else 0,
            "bands": bands}


def realise(lengths, world, tokens, kind, cap, bands, near):
    """The prototype that tried to build the estimate's bands (not kept): the fluid cut
    to each band's level, the dearest band first, each batch the coarsest count whose
    longest fluid sample at or under level/count comes within `near` of the level; the
    fluid left over cut into steps at a common level, raised by 1% until it fits. Returns
    the steps' max/mean and the padding share."""
    f = cost_fn(kind)
    budget = f(tokens)
    cap = cap or len(lengths)
    lengths = [min(l, tokens) for l in lengths]
    singles = sorted((l for l in lengths if 2 * f(l) > budget), reverse=True)
    pool = sorted(l for l in lengths if 2 * f(l) <= budget)  # ascending

    def batch_at(level):  # (count, index of its longest in pool), or None
        for count in range(1, min(cap, len(pool)) + 1):
            lo, hi = 0, len(pool)
            while lo < hi:  # first sample dearer than level / count
                mid = (lo + hi) // 2
                if count * f(pool[mid]) <= level * budget:
                    lo = mid + 1
                else:
                    hi = mid
            top = lo - 1
            if top >= count - 1 and count * f(pool[top]) >= (1 - near) * level * budget:
                return count, top
            if count * f(pool[0]) > level * budget:
                return None
        return None

    def take(count, top):
        members = pool[top - count + 1:top + 1]
        del pool[top - count + 1:top + 1]
        return count, members[-1], sum(members)

    steps = []
    for first, end in bands:
        level = f(singles[first]) / budget
        step = [(1, l, l) for l in singles[first:end]]
        while len(step) < world and (found := batch_at(level)):
            step.append(take(*found))
        steps.append(step)
    while pool:
        mass = sum(f(l) / budget for l in pool)
        count = max(1, math.ceil(mass / world - 1e-9))
        level = min(1.0, mass / (count * world))
        while True:
            saved, made = list(pool), []
            for _ in range(count):
                step = []
                while len(step) < world and pool:
                    found = batch_at(level)
                    if found:
                        step.append(take(*found))
                    elif f(pool[-1]) <= level * budget * (1 + 1e-4):
                        step.append(take(1, len(pool) - 1))
                    else:
                        break
                made.append(step)
            if not pool:
                break
            pool[:] = saved
            level *= 1.01
            if level > 1:
                level, count = 1.0, count + 1
        steps += made
    ratios, padded, real = [], 0, 0
    for step in steps:
        costs = [c * f(l) for c, l, _ in step] + [0] * (world - len(step))
        ratios.append(max(costs) * world / sum(costs))
        padded += sum(c * l for c, l, _ in step)
        real += sum(r for _, _, r in step)
    return ratios, 1 - real / padded


def planner_mean(binary, path, world, tokens, kind, cap):
    cmd = [binary, "plan", "--lengths", path, "--world-size", str(world), "--tokens-per-rank",
           str(tokens), "--oversize", "truncate", "--cost", kind, "--epochs", "1",
           "--no-baselines", "--json"]
    if cap is not None:
        cmd += ["--max-batch-size", str(cap)]
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    chosen = report["config"]["max_batch_size"]
    return report["evenfeed"][f"imbalance_{kind}"]["mean"], (chosen if chosen > 0 else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lengths")
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--cost", choices=["linear", "quadratic"], default="linear")
    parser.add_argument("--cap", type=int, default=None, help="sample cap (none: no cap)")
    parser.add_argument("--plan", metavar="BIN", help="evenfeed binary: print its mean beside")
    parser.add_argument("--realise", type=float, metavar="NEAR",
                        help="also build the bands as the prototype did, batches within NEAR "
                             "(e.g. 0.02) of their level, and print its figures")
    args = parser.parse_args()
    try:
        with open(args.lengths) as src:
            lengths = [int(line) for line in src if line.strip()]
    except (OSError, ValueError) as err:
        sys.exit(f"plan_band_estimate: cannot read lengths from {args.lengths}: {err}")
    cap, planned = args.cap, None
    if args.plan:  # the planner's figure, and its cap (chosen from the data unless given)
        planned, chosen = planner_mean(args.plan, args.lengths, args.world_size, args.tokens,
                                       args.cost, args.cap)
        cap = args.cap if args.cap is not None else chosen
    e = estimate(lengths, args.world_size, args.tokens, args.cost, cap)
    line = (f"{args.lengths} W={args.world_size} T={args.tokens} {args.cost} cap={cap}: "
            f"{e['singles']} singles, {e['work_steps']:.2f} full-budget steps of work; "
            f"banded estimate mean {e['mean']:.4f} ({e['band_steps']} band steps + "
            f"{e['fluid_steps']} fluid)")
    if planned is not None:
        line += f"; planner {planned:.4f}"
    if args.realise is not None:
        ratios, padding = realise(lengths, args.world_size, args.tokens, args.cost, cap,
                                  e["bands"], args.realise)
        line += (f"; prototype {len(ratios)} steps, mean {sum(ratios) / len(ratios):.4f}, "
                 f"worst {max(ratios):.3f}, padding {100 * padding:.2f}%")
    print(line)


if __name__ == "__main__":
    main()
