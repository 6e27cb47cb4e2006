"""Issue 3's targets, checked on one `evenfeed plan --json` report, for the bench scripts
(plan_row.py, plan_sweeps.py): padding <= 2%, imbalance mean <= 1.03 and p99 <= 1.10
under the cost in use, no sample dropped or duplicated, the same step count on every
rank, |lag-1| <= 0.2, and at most 10% of pairs batched together again (no figure, with
one epoch, counts as none)."""


def meets_targets(report):
    """Whether our planner's figures in `report` (parsed JSON) meet every target."""
    e = report["evenfeed"]
    imbalance = e["imbalance_" + report["config"]["cost"]]
    return (e["padding_waste"] <= 0.02 and imbalance["mean"] <= 1.03 and imbalance["p99"] <= 1.10
            and sum(e["dropped_per_epoch"]) == 0 and sum(e["duplicated_per_epoch"]) == 0
            and e["equal_step_counts_across_ranks"] and abs(e["lag1_batch_mean_length"]) <= 0.2
            and (e["repeated_pair_share"] or 0) <= 0.10)
