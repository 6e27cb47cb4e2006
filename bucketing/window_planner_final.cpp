// WindowPlanner, second part: what happens to samples that cannot be carried into the
// next window (the epoch's last window, or a carry that outgrew a window). They are cut
// into steps of exactly W batches (final_cut), the end is made in other ways where it
// is out of level and the most level kept (finish_level), and a window still above the
// padding guard is planned again quieter (plan_quietly_if_less_padded). A light final
// batch borrows in window_planner_borrow.cpp; the lumps under a token bound are placed
// in window_planner_lumps.cpp; the window's steps are levelled in
// window_planner_level.cpp. See window_planner.h for the whole sequence.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "bucketing/end_runs.h"
#include "bucketing/evenly_spread.h"
#include "bucketing/greedy_segments.h"
#include "bucketing/lump_runs.h"
#include "bucketing/window_planner.h"
#include "bucketing/window_planner_parts.h"
#include "core/philox.h"

namespace evenfeed {

// A final step split in two may hold this many times its padded slots (cutting W ways
// twice moves the boundaries between long samples; the padding target is 2%).
static constexpr double kSplitSlack = 1.02;
// split_off_light_tail weighs a split at most at this many of the step's batch
// boundaries (evenly_spread over those that can split off fillers), and at the fillers
// after the last coarse sample. Each weighing cuts up to the whole step W ways twice by
// bisection: at 1,024 ranks, 1.15 million paragraphs (quadratic, 8,192 tokens) end
// their epoch's final cuts in steps of a thousand boundaries each, and that search was
// three quarters of the nine minutes the plan took. At 65 ranks and fewer every
// boundary is weighed, as before.
static constexpr size_t kMostSplitsWeighed = 64;
// How partners are cut to measure by cut_fluid_pieces, a way for each. Nearer than 0.85
// (0.9-0.98), pieces that stop as soon as they are near enough take mid-length samples
// and leave the coarse ones to a final step at max/mean 1.2-1.4 on Debian changelog
// entries (0.75 and 0.95 met no more targets than 0.85 and lost one). Pieces that go on
// to their target (PieceCut::to_target) levelled HTML pages at 64 ranks (quadratic,
// 16,384 tokens: the worst step 1.102 -> 1.068, with 0.9) and /usr/share/doc files and
// the changelog entries at other budgets, but on small synthetic corpora of lumps
// some ends were less level so (at 8 ranks, 1 of 40 seeds: 1.100 -> 1.126), so all
// three are tried and the most level end kept.
static constexpr PieceCut kPieceCuts[] = {
    {.near_enough = 0.85, .to_target = false},
    {.near_enough = 0.85, .to_target = true},
    {.near_enough = 0.9, .to_target = true},
};
// A window's end is also made with its capped samples rejoining the leftover
// (FinishWay::capped_rejoin) when they make at most this many steps: the ends it
// levels are small corpora's (a few dozen samples at the whole budget beside thousands
// of short ones), and a large window's thousands of capped steps would make a final cut
// of most of the window.
static constexpr size_t kMostCappedStepsRejoined = 8;
// take_back_until_last_step_full keeps a LightTailBound once it has taken back this many
// steps (each an exact check of a cut of the whole leftover).
static constexpr size_t kStepsBeforeBound = 16;

// Steps a final cut of `entries` takes: enough for their mass at the full budget, and
// for their segments at the full budget in key order. Sorts `entries` by key.
size_t WindowPlanner::final_step_count(std::vector<Entry>& entries) const {
  sort_by_key(entries);
  return final_step_count(entries, segments_of(entries));
}

// The same for entries in key order, `greedy` their segments.
size_t WindowPlanner::final_step_count(const std::vector<Entry>& sorted,
                                       const GreedySegments& greedy) const {
  double total = 0;
  for (const Entry& e : sorted) total += options_.cost.per_sample(e.length);
  const double per_step = static_cast<double>(world_size_) * limits_.budget;
  const size_t by_mass = std::max<size_t>(1, static_cast<size_t>(std::ceil(total / per_step)));
  const size_t by_segments = (greedy.count(limits_.budget) + world_size_ - 1) / world_size_;
  return std::max(by_mass, by_segments);
}

// True when a final cut of `entries` would take more than one step and its last step
// could not give every rank half the budget. Sorts `entries` by key.
bool WindowPlanner::last_final_step_light(std::vector<Entry>& entries) const {
  sort_by_key(entries);
  // Weighed as spans: take_back_until_levellable asks again after each step it takes back.
  const GreedySegments greedy = segments_of(entries);
  const size_t steps = final_step_count(entries, greedy);
  if (steps <= 1) return false;
  const size_t slots = steps * world_size_;
  const std::vector<Span> segments = cut_spans_at(
      entries, greedy.all(), least_cut_level(entries, greedy, greedy.all(), slots), slots, &greedy);
  double tail = 0;
  for (size_t k = (steps - 1) * world_size_; k < segments.size(); ++k) tail += segments[k].cost;
  uint64_t longest = 1;
  for (size_t k = (steps - 1) * world_size_; k < segments.size(); ++k)
    longest = std::max(longest, segments[k].longest);
  return tail < 0.5 * reachable(longest) * static_cast<double>(world_size_);
}

// The epoch's leftover (or a window's) cut into steps of W batches (cut_final_steps).
// A cut is a function of the leftover's samples alone (in key order), and the ways a
// window's end is finished often leave the same ones: each is cut once (FinalCuts).
std::vector<WindowPlanner::Planned> WindowPlanner::final_cut(std::vector<Entry> leftover) const {
  if (leftover.empty()) return {};
  sort_by_key(leftover);
  uint64_t hash = leftover.size();
  for (const Entry& e : leftover) hash = mix64(hash ^ e.id);
  if (const std::vector<Planned>* kept = final_cuts_->find(leftover, hash)) return *kept;
  std::vector<Planned> planned = cut_final_steps(leftover);
  final_cuts_->keep(std::move(leftover), hash, planned);
  return planned;
}

// The epoch's leftover (or a window's, when it cannot be carried): cut into steps of
// exactly W batches, contiguous in key order so padding stays low. All steps but the
// last take the most expensive segments at one level; the last step's entries are cut
// again to a level of their own, so a light last step is balanced too. `sorted` is in
// key order already (final_step_count's sort leaves it as it is).
std::vector<WindowPlanner::Planned> WindowPlanner::cut_final_steps(
    std::vector<Entry>& sorted) const {
  std::vector<Planned> planned;
  const size_t W = world_size_;
  const size_t step_count = final_step_count(sorted);
  std::vector<Batch> segments = cut_into(sorted, step_count * W);
  const size_t head = (step_count - 1) * W;
  if (segments.size() > head + W || (step_count > 1 && segments.size() > head)) {
    std::vector<Entry> rest;
    for (size_t k = head; k < segments.size(); ++k)
      rest.insert(rest.end(), segments[k].entries.begin(), segments[k].entries.end());
    sort_by_key(rest);
    segments.resize(head);
    for (Batch& b : cut_into(rest, W)) segments.push_back(std::move(b));
  }
  const size_t last_step = (segments.size() - 1) / W * W;
  std::vector<Batch> last_batches(segments.begin() + static_cast<long>(last_step), segments.end());
  segments.resize(last_step);
  for (size_t k = 0; k < segments.size(); k += W) {
    planned.push_back(make_step(
        {segments.begin() + static_cast<long>(k), segments.begin() + static_cast<long>(k + W)}));
  }
  for (std::vector<Batch>& step : split_off_light_tail(std::move(last_batches)))
    planned.push_back(make_step(std::move(step)));
  return planned;
}

// max/mean of the batches' costs, counting the ranks without a batch (1 when empty).
double WindowPlanner::imbalance(const std::vector<Batch>& batches) const {
  return max_over_mean(batches, world_size_);
}

// A final step whose cheapest batches are short fillers far below the rest (a thousand
// one-word paragraphs after a few dozen mid-length ones) cannot be levelled by cutting
// it W ways: the short ones would be padded to the long ones' length. Such a step is
// split in two, the longer samples cut W ways and the shortest (in key order) W ways,
// when the shortest are fillers enough to give every rank a filler's grain and both
// steps end more level than the one, with at most kSplitSlack times its padded slots.
// Tried as the shortest: each run of the step's segments from the short end (at most
// kMostSplitsWeighed of them, evenly spread), and all the fillers after its last coarse
// sample. The epoch gets one more, lighter step.
std::vector<std::vector<WindowPlanner::Batch>> WindowPlanner::split_off_light_tail(
    std::vector<Batch> step) const {
  const size_t W = world_size_;
  const double before = imbalance(step);
  if (step.size() < W || before <= kLevelEnough) return {std::move(step)};
  std::vector<Entry> entries;
  for (const Batch& b : step) entries.insert(entries.end(), b.entries.begin(), b.entries.end());
  sort_by_key(entries);
  std::vector<size_t> tails;
  std::sort(step.begin(), step.end(), [](const Batch& a, const Batch& b) {
    return by_key(a.entries.front(), b.entries.front());
  });
  for (size_t k = step.size(), tail = 0; k-- > 1;) tails.push_back(tail += step[k].entries.size());
  size_t fillers = 0;
  while (fillers < entries.size() &&
         per_batch(entries[entries.size() - 1 - fillers].length) >= kFillerPerBatch)
    ++fillers;
  const size_t n = entries.size();
  const EndRuns ends(entries, options_.cost);
  // A tail is weighed when it gives every rank a filler's grain, leaves the longer part
  // something, and holds fillers only.
  const auto weighable = [&](size_t tail) {
    return tail >= W * kFillerPerBatch && tail < n &&
           per_batch(ends.longest({n - tail, n})) >= kFillerPerBatch;
  };
  std::erase_if(tails, [&](size_t tail) { return !weighable(tail); });
  tails = evenly_spread(std::move(tails), kMostSplitsWeighed);
  if (weighable(fillers)) tails.push_back(fillers);
  // Each part is weighed as spans (a cut per batch of the step, each of up to all its
  // samples); only the chosen split is made into batches.
  double best_imbalance = before;
  const double slots_before = slots(step);
  std::optional<std::pair<std::vector<Span>, std::vector<Span>>> chosen;
  std::optional<GreedySegments> greedy;  // made once a tail is cut
  auto cut = [&](GreedySegments::Run run) {
    if (!greedy) greedy.emplace(segments_of(entries));
    const std::optional<double> total = ends.total(run);
    const double level = total ? least_cut_level(*greedy, run, W, *total,
                                                 options_.cost.per_sample(ends.longest(run)))
                               : least_cut_level(entries, *greedy, run, W);
    return cut_spans_at(entries, run, level, W, &*greedy);
  };
  for (size_t tail : tails) {
    const size_t split = n - tail;
    // The shorter part first: where it alone ends no more level than the best so far, or
    // pads past the slack, the longer part cannot help, and is not cut.
    std::vector<Span> shorter = cut({split, n});
    if (imbalance(shorter) >= best_imbalance || slots(shorter) > kSplitSlack * slots_before)
      continue;
    std::vector<Span> longer = cut({0, split});
    const double after = std::max(imbalance(longer), imbalance(shorter));
    if (after < best_imbalance && slots(longer) + slots(shorter) <= kSplitSlack * slots_before) {
      best_imbalance = after;
      chosen.emplace(std::move(longer), std::move(shorter));
    }
  }
  if (!chosen) return {std::move(step)};
  return {batches_of(entries, chosen->first), batches_of(entries, chosen->second)};
}

// Padded token slots of `batches` (count x longest, summed).
double WindowPlanner::slots(const std::vector<Batch>& batches) {
  double total = 0;
  for (const Batch& b : batches)
    total += static_cast<double>(b.entries.size()) * static_cast<double>(b.longest);
  return total;
}

// The same for spans, summed in their order (so a cut weighed as spans and as the
// batches they make counts the same slots, to the last bit).
double WindowPlanner::slots(const std::vector<Span>& spans) {
  double total = 0;
  for (const Span& s : spans)
    total += static_cast<double>(s.count) * static_cast<double>(s.longest);
  return total;
}

void WindowPlanner::recost(Batch& b) const {
  b.longest = 0;
  for (const Entry& e : b.entries) b.longest = std::max(b.longest, e.length);
  b.cost = b.entries.empty() ? 0.0 : options_.cost.batch(b.entries.size(), b.longest);
}

// max/mean of a step's batch costs (1 for an empty step).
double WindowPlanner::imbalance(const Planned& step) const {
  return imbalance(step.batches);
}

// `samples` cut into steps of their own (work.apart) when every rank can get a
// filler's grain of them; fewer join the leftover.
void WindowPlanner::cut_apart_or_rejoin(std::vector<Entry> samples, Work& work) const {
  if (samples.size() >= world_size_ * kFillerPerBatch) {
    for (Planned& p : final_cut(std::move(samples))) work.apart.push_back(std::move(p));
  } else {
    work.leftover.insert(work.leftover.end(), samples.begin(), samples.end());
  }
}

// Whether capped samples are left over, too few for steps of their own, beside steps
// apart that they could be merged with (FinishWay::capped_merged).
bool WindowPlanner::few_capped_left(const Work& work) const {
  return !work.capped.empty() && work.capped.size() < world_size_ * kFillerPerBatch &&
         !work.apart.empty();
}

// Moves into work.capped the samples of the step apart whose longest sample is longest
// (the capped step nearest in length to what is left over, which is the longest of the
// capped samples), when work.capped is too few for steps of its own and the two
// together are enough (FinishWay::capped_merged).
void WindowPlanner::merge_with_longest_apart(Work& work) const {
  if (!few_capped_left(work)) return;
  auto longest = [](const Planned& step) {
    uint64_t most = 0;
    for (const Batch& b : step.batches) most = std::max(most, b.longest);
    return most;
  };
  auto step =
      std::max_element(work.apart.begin(), work.apart.end(),
                       [&](const Planned& a, const Planned& b) { return longest(a) < longest(b); });
  if (work.capped.size() + step->samples < world_size_ * kFillerPerBatch) return;
  for (const Batch& b : step->batches)
    work.capped.insert(work.capped.end(), b.entries.begin(), b.entries.end());
  work.apart.erase(step);
}

// The samples that cannot be carried, cut into whole steps. Capped ones make steps of
// their own when there are enough; lumps are placed first; then the final cut, with
// planned steps taken back when the leftover cannot be levelled alone.
void WindowPlanner::finish(Work& work, const FinishWay& way) const {
  if (way.capped_rejoin) {
    for (const Planned& step : work.apart) work.give_back(step.batches);
    work.apart.clear();
    work.leftover.insert(work.leftover.end(), work.capped.begin(), work.capped.end());
  } else {
    // Capped samples left over get steps of their own, level among themselves.
    if (way.capped_merged) merge_with_longest_apart(work);
    cut_apart_or_rejoin(std::move(work.capped), work);
  }
  work.capped.clear();
  if (way.deal_lumps) {
    take_back_partners(work.planned, work.leftover);
    for (Planned& p : deal_lump_steps(work.leftover)) work.apart.push_back(std::move(p));
  }
  // Lumps first (under a token bound, or singletons when asked): they take the dearest
  // of the rest as partners, which are mostly in this window's planned steps of
  // mid-length samples.
  if (const size_t lumps = lump_count(work.leftover, way.singletons_as_lumps, way.awkward_as_lumps);
      lumps > 0 && lumps <= kMostLumpsPlaced) {
    take_back_partners(work.planned, work.leftover);
    for (Planned& p : place_lumps(work.leftover, way)) work.apart.push_back(std::move(p));
  }
  // Short samples that cannot reach the leftover's dearest sample even in a full
  // batch may be set aside while planned steps are taken back (see finish_level).
  std::vector<Entry> unreachable;
  if (way.set_aside) unreachable = set_aside_unreachable(work.leftover);
  if (!way.capped_rejoin) take_back_until_levellable(work);
  cut_apart_or_rejoin(std::move(unreachable), work);
  std::vector<Planned> final_steps = final_cut(std::move(work.leftover));
  work.leftover.clear();
  double room = padding_room({&work.planned, &work.apart, &final_steps}, kBorrowPaddingShare);
  for (Planned& step : final_steps) {
    for (uint32_t k = 0; k < world_size_ && borrow_for_lightest(work.planned, step, room); ++k) {
    }
  }
  for (Planned& p : final_steps) work.planned.push_back(std::move(p));
}

// The window's last steps made (finish), then levelled by exchanging batches
// (level_by_swaps): the window's steps, `work` spent. The end is made in each of the
// ways that apply, and the most level kept: its worst step more level than the best
// way's so far, its steps no less level on average, give or take a tenth of what the
// worst step gains (kMeanPerWorstGained), or its worst step as level and its steps
// more level on average (more_level).
// - With a sample cap or token bound, short samples that cannot reach the leftover's
//   dearest sample even in a full batch count towards its mass but cannot stand beside
//   that sample: their light batches and the steps taken back for them can leave a
//   final step of a few lumps among light batches (max/mean 2.1 on a lumpy corpus at
//   64 ranks, capped at 64). Setting them aside while steps are taken back avoids
//   that, but elsewhere takes back too little (1.3 on Debian changelog entries).
// - When the leftover holds samples that no other can share a batch with, of mixed
//   cost (documents truncated to the budget beside others at 0.5-0.8 of it), cutting
//   them W at a time leaves a final step at max/mean 1.25 (1.8 million sentences at 64
//   ranks, 32,768 tokens); placed as lumps, with partners (place_lumps), 1.11. Where
//   the leftover's mid-length samples already level them, placing them is worse.
// - Partners cut to measure in the samples' order give a lump's step the longest
//   samples left, which at the top are coarse (0.4-0.5 of the budget each on Debian
//   changelog entries, so a piece meant to cost 0.8 stops at 0.45: max/mean 1.16 where
//   the runs promised 1.04). Cut from samples of one length (cut_fluid_pieces), those
//   steps reach 1.09, but the coarse samples they pass over can leave the final step
//   worse; both are tried.
// - Capped samples keep to steps of their own, which a final cut does not take back.
//   Where they are all a small corpus has besides samples too dear to share a batch
//   (70 documents at the whole budget among 3,000 short ones at 64 ranks, quadratic,
//   the automatic cap of 64), the end was two steps of documents at 1.57-1.59 beside
//   two light capped steps, one at 1.61. With the window's capped samples rejoining
//   the leftover (when they make few steps), two steps at 1.46, where no plan padding
//   at most 2% can be under 1.457 (imbalance_bound.h). Kept only if it pads no more
//   than the best way so far, or than the padding guard.
// - Capped samples left over, too few for steps of their own, join the leftover and
//   stand beside its dearer batches at their cap: on C/C++ and Python sources at 64
//   ranks, 16,384 tokens, capped at 64, batches of 64 samples of 221-308 words at 0.14
//   of the budget sat in a step of lumps at 0.43 (max/mean 1.09). Cut instead with the
//   samples of the capped step whose samples are longest (merge_with_longest_apart),
//   they make steps of their own instead: worst step 1.091 -> 1.083, mean 1.0426 ->
//   1.0386 there. Every way above is tried so too.
// - Samples that make batches of at most two, whose pairs cost under 0.95 of the
//   budget (the awkward band: 18,600-21,700 words at 32,768 tokens), are the dearest
//   partners a lump's step can take, yet each leaves its rank a quarter idle: Python
//   and C sources at 32,768 tokens, 64 ranks, had their lumps' step at max/mean 1.169
//   with nine such pairs among 23 singletons. Placed alone as lumps too, a run of them
//   can make a step of its own at their level: 1.132. Tried last, and kept only where
//   it is as quick as any end tried and makes no more steps (below).
// - Under a token bound, unmatched lumps that all reach a window's end (a corpus of one
//   window) go into runs of the cost order, which leave the sparse ones below a
//   plateau at the budget in steps of their own: C/C++ and Python sources at 64 ranks,
//   8,192 tokens, bound at the budget, had two such steps at 1.115-1.120. Dealt evenly
//   over the whole steps they fill (deal_lump_steps), the rest placed in runs after,
//   p99 1.107 and useful share +0.25 points. Kept only where it takes at most
//   kSpreadTimeShare longer than the best end so far (each dealt step costs its
//   dearest lump, at the budget).
// A way whose worst step is more level is kept even when its steps are a little less
// level on average: up to this share of what the worst step gains. The worst step is
// the one every rank waits on; a strict "no less level on average" threw away ends
// that took the worst step from 1.30 to 1.10 for 0.003 of mean (whole files of
// /usr/share/doc, quadratic, 64 ranks, 32,768 tokens). At 0.2 the more level worst
// steps of a large corpus's windows left more steps near it (paragraphs, 16,384
// tokens: p99 1.092 -> 1.101).
static constexpr double kMeanPerWorstGained = 0.1;
// Two levels (worst steps, or means over steps) within this of each other are equal:
// they differ by rounding only.
static constexpr double kSameLevel = 1e-12;
// A way that is not more level is kept still where it is quicker by at least
// kQuickerShare (the sum over the window's steps of each one's dearest batch, which is
// how long they take), with its worst step at most kWorstSlack and its mean at most
// kMeanSlack less level than the best way's so far. Ranked by level alone, an end 4%
// quicker, with as many steps and a mean max/mean of 1.029 against 1.051, lost to one
// whose worst step was 0.0014 more level (whole files of /usr/share/doc, quadratic, 64
// ranks, 32,768 tokens, capped at 128). Kept, the plan meets every target there, its
// cap trial now doubling the cap: 16 -> 13 steps an epoch, useful share 94.08% ->
// 95.83%, mean max/mean 1.0346 -> 1.0291, p99 1.087 -> 1.098.
static constexpr double kQuickerShare = 0.02;
static constexpr double kWorstSlack = 0.005;
static constexpr double kMeanSlack = 0.002;
// A window's best end whose worst step is above this (the p99 target) has its dearest
// steps planned again together (regroup_dearest).
static constexpr double kRegroupAbove = 1.10;

// The other ways to make `work`'s end, besides the plain one, that apply to it: the
// lumps placed in runs, the capped samples rejoining or merged, partners cut to measure
// each way, the unmatched lumps dealt evenly, and the awkward band as lumps last.
std::vector<WindowPlanner::FinishWay> WindowPlanner::other_finish_ways(const Work& work) const {
  std::vector<FinishWay> others;
  // Appends, for each of others[first...] that cuts partners to measure, the same way
  // with each of kPieceCuts.
  auto with_piece_cuts = [](std::vector<FinishWay>& ways, size_t first) {
    for (size_t k = first, n = ways.size(); k < n; ++k) {
      if (!ways[k].partners_to_measure) continue;
      for (const PieceCut& cut : kPieceCuts) {
        FinishWay fitted = ways[k];
        fitted.piece_cut = cut;
        ways.push_back(fitted);
      }
    }
  };
  if (bounded()) others.push_back({.set_aside = true});
  const size_t lumps = lump_count(work.leftover, false);
  if (lumps > 0) others.push_back({.partners_to_measure = true});
  const size_t singletons = lump_count(work.leftover, true);
  if (singletons > lumps) {
    others.push_back({.singletons_as_lumps = true});
    others.push_back({.singletons_as_lumps = true, .partners_to_measure = true});
  }
  if ((!work.apart.empty() || !work.capped.empty()) &&
      work.apart.size() <= kMostCappedStepsRejoined)
    others.push_back({.capped_rejoin = true});
  // Each way so far again with the capped samples left over merged into a capped step,
  // where they are too few for steps of their own (merge_with_longest_apart).
  if (few_capped_left(work)) {
    const size_t ways = others.size();
    others.push_back({.capped_merged = true});
    for (size_t k = 0; k < ways; ++k) {
      if (others[k].capped_rejoin) continue;
      FinishWay merged = others[k];
      merged.capped_merged = true;
      others.push_back(merged);
    }
  }
  with_piece_cuts(others, 0);
  // The unmatched lumps dealt evenly over the whole steps they fill (FinishWay::deal_lumps).
  const size_t first_dealt = others.size();
  if (has_unmatched_lumps()) {
    others.push_back({.deal_lumps = true});
    others.push_back({.partners_to_measure = true, .deal_lumps = true});
    with_piece_cuts(others, first_dealt);
  }
  // The awkward band as lumps last: it may only displace an end made the other ways
  // whose worst step it betters (an end it betters by a hair first would block one
  // that is as level at the worst and more level on average).
  if (singletons > lumps && lump_count(work.leftover, true, true) > singletons) {
    const size_t first = others.size();
    others.push_back({.singletons_as_lumps = true, .awkward_as_lumps = true});
    others.push_back(
        {.singletons_as_lumps = true, .awkward_as_lumps = true, .partners_to_measure = true});
    with_piece_cuts(others, first);
  }
  return others;
}

// Whether an end made `way`, `level` and taking `time`, displaces the best so far.
// The awkward band alone costs steps of its own: an end made that way is kept only
// where it is also as quick as every end tried (`fastest`, the sum of each step's
// dearest batch) and has no more steps than the best so far. With an extra step it
// looked quicker window by window but made the plan slower (1.8 million sentences, 64
// ranks, 16,384 tokens: 14 -> 16 steps an epoch, useful share 98.03% -> 97.34%); kept
// for a level worst step beside a quicker end less level by 0.001, it won over the
// window's quieter plan, 7% quicker (Debian changelog entries, 32,768 tokens, seed 1:
// useful share 93.41% -> 90.24%).
bool WindowPlanner::better_end(const FinishWay& way, const EndTried& end, const EndTried& best,
                               double fastest) {
  const bool quicker =
      !way.awkward_as_lumps && quicker_nearly_as_level(end.time, end.level, best.time, best.level);
  const bool more_level_as_quick =
      more_level(end.level, best.level) &&
      (!way.awkward_as_lumps || (end.time <= fastest && end.steps <= best.steps)) &&
      (!way.deal_lumps || end.time <= (1 + kSpreadTimeShare) * best.time);
  return quicker || more_level_as_quick;
}

std::vector<WindowPlanner::Planned> WindowPlanner::finish_level(Work work) const {
  auto finished = [this](Work w, const FinishWay& way) {
    finish(w, way);
    for (Planned& p : w.apart) w.planned.push_back(std::move(p));
    level_by_swaps(w.planned);
    return std::move(w.planned);
  };
  std::vector<Planned> best = finished(work, {});
  const StepsLevel plain_level = level_of(best);
  if (plain_level.worst <= kLevelEnough) return best;
  EndTried best_end{plain_level, duration(best), best.size()};
  const double most_padding = std::max(padding_share(best), options_.padding_guard);
  double fastest = best_end.time;
  for (const FinishWay& way : other_finish_ways(work)) {
    std::vector<Planned> steps = finished(work, way);
    if (way.capped_rejoin && padding_share(steps) > most_padding) continue;
    const EndTried end{level_of(steps), duration(steps), steps.size()};
    const bool better = better_end(way, end, best_end, fastest);
    fastest = std::min(fastest, end.time);
    if (better) {
      best = std::move(steps);
      best_end = end;
    }
  }
  // Last, where the best end still misses the p99 target, its dearest steps planned
  // again together (regroup_dearest), kept where more level and padded no more.
  if (best_end.level.worst <= kRegroupAbove) return best;
  if (std::optional<std::vector<Planned>> regrouped = regroup_dearest(best)) {
    level_by_swaps(*regrouped);
    if (more_level(level_of(*regrouped), best_end.level) &&
        padding_share(*regrouped) <= most_padding)
      best = std::move(*regrouped);
  }
  return best;
}

// How long `steps` take: each as long as its dearest batch.
double WindowPlanner::duration(const std::vector<Planned>& steps) {
  double time = 0;
  for (const Planned& step : steps) time += dearest(step);
  return time;
}

// The cost of `step`'s dearest batch: how long it runs (0 for an empty step).
double WindowPlanner::dearest(const Planned& step) {
  double most = 0;
  for (const Batch& b : step.batches) most = std::max(most, b.cost);
  return most;
}

// Whether steps taking `a_time` (duration) at `a_level` take at most 1 - kQuickerShare
// of `b_time` and are nearly as level as steps at `b_level` (kWorstSlack, kMeanSlack).
bool WindowPlanner::quicker_nearly_as_level(double a_time, const StepsLevel& a_level, double b_time,
                                            const StepsLevel& b_level) {
  return a_time < (1 - kQuickerShare) * b_time && a_level.worst <= b_level.worst + kWorstSlack &&
         a_level.mean <= b_level.mean + kMeanSlack;
}

// How level `steps` are: max/mean of the worst, and the mean over steps.
WindowPlanner::StepsLevel WindowPlanner::level_of(const std::vector<Planned>& steps) const {
  std::vector<double> ratios;
  ratios.reserve(steps.size());
  for (const Planned& step : steps) ratios.push_back(imbalance(step));
  return level_of_ratios(ratios);
}

// How level steps of these max/mean are.
WindowPlanner::StepsLevel WindowPlanner::level_of_ratios(const std::vector<double>& ratios) {
  StepsLevel level;
  for (double ratio : ratios) {
    level.worst = std::max(level.worst, ratio);
    level.mean += ratio / static_cast<double>(ratios.size());
  }
  return level;
}

// Whether steps at `a` are more level than at `b`: their worst step more level, and
// their mean no worse, give or take kMeanPerWorstGained of what the worst step gains;
// or, their worst steps equally level (within kSameLevel), their mean more level.
// Ends of one window often share their worst step: under a token bound, the step of
// the plateau of lumps that every way places alike. Until plan revision 26 an end
// more level everywhere else lost to the first one tried: 1.8 million sentences under
// a bound of 4,096 tokens at 64 ranks kept the plain end of a window, at a mean of
// 1.0442, where the ends with the capped samples rejoining the leftover or merged made
// 1.0428 and 1.0411 beside the same worst step.
bool WindowPlanner::more_level(const StepsLevel& a, const StepsLevel& b) {
  if (std::abs(a.worst - b.worst) <= kSameLevel) return a.mean < b.mean - kSameLevel;
  return a.worst < b.worst && a.mean <= b.mean + kMeanPerWorstGained * (b.worst - a.worst);
}

// The noise is what trades padding for fresh batch mates, and most corpora can afford
// it. At large budgets some cannot: batches of a thousand short paragraphs under
// 32,768 tokens already pad 1.6% from their cuts, and the noise took the window to
// 2.0%. The window is planned again from the same samples with half the noise's reach
// and half its padding allowance, and the quieter plan is kept when it pads less and
// its worst step is no less level (or level enough): a few more pairs meet again
// (4.2% -> 5.1% there), and on a small corpus many more (Python and C sources at
// 32,768 tokens gave a quieter end of max/mean 1.25 when only padding counted).
//
// `noise_cap_scale` narrows the noise's cap as well (1: as chosen). The first quieter
// plan keeps the cap; a window still above the padding target after it is planned once
// more with the cap narrowed (plan): the automatic cap's narrowest choice, 0.05, alone
// took `evenfeed synth tokens`' 20,000 documents at 32,768 tokens to 2.14% padding at
// 2 ranks and 2.16% at 64 (1.92% and 1.98% narrowed, with 9.5% and 6.1% of pairs again).
void WindowPlanner::plan_quietly_if_less_padded(std::vector<Planned>& planned, double padding,
                                                bool last, std::vector<PlanItem>& carry,
                                                size_t carried_before,
                                                double noise_cap_scale) const {
  // The window's samples are exactly those planned and those carried on; the noisy
  // sort orders them by key, id last, so the order they are gathered in does not matter.
  std::vector<PlanItem> items =
      items_of(planned, {carry.begin() + static_cast<long>(carried_before), carry.end()});
  BucketingOptions quiet = options_;
  quiet.noise *= 0.5;
  quiet.noise_padding *= 0.5;
  quiet.noise_cap *= noise_cap_scale;
  std::vector<PlanItem> quiet_carry;
  WindowPlanner quiet_planner(quiet, world_size_, seed_, epoch_);
  quiet_planner.set_lump_spread(spread_);
  std::vector<Planned> quieter = quiet_planner.plan_steps(std::move(items), last, quiet_carry);
  auto worst = [this](const std::vector<Planned>& steps) {
    double ratio = 1;
    for (const Planned& step : steps) ratio = std::max(ratio, imbalance(step));
    return ratio;
  };
  if (padding_share(quieter) >= padding ||
      worst(quieter) > std::max(kLevelEnough, worst(planned))) {
    return;
  }
  planned = std::move(quieter);
  carry.resize(carried_before);
  carry.insert(carry.end(), quiet_carry.begin(), quiet_carry.end());
}

// Moves out of `leftover` the samples that, under the sample cap or token bound, cannot
// reach the cost of its dearest sample even in a full batch, and returns them (called
// only when bounded; final_cut sorts what it is given by key).
std::vector<WindowPlanner::Entry> WindowPlanner::set_aside_unreachable(
    std::vector<Entry>& leftover) const {
  double dearest = 0;
  for (const Entry& e : leftover) dearest = std::max(dearest, options_.cost.per_sample(e.length));
  const auto unreachable = std::stable_partition(
      leftover.begin(), leftover.end(), [&](const Entry& e) { return reaches_at_cap(e, dearest); });
  std::vector<Entry> aside(unreachable, leftover.end());
  leftover.erase(unreachable, leftover.end());
  return aside;
}

// An upper bound, kept as samples join a leftover, on what last_final_step_light weighs:
// its last step's cost. That step is the cut's cheapest spans, at most W of them, and a
// span holds at most `cap` samples in key order, so the last step costs no more than the
// last W x cap samples in key order would, each padded to the longest of them: when
// even that is under half of what a rank can reach, the last step is light without
// cutting. Under a small sample cap nearly every step of a large window is that light
// (at 8 ranks, capped at 2, a batch of the shortest samples never reaches half the
// budget), and take_back_until_levellable took back tens of thousands of steps, each
// followed by a cut of the whole leftover: more than ten minutes for a million
// paragraphs.
class WindowPlanner::LightTailBound {
 public:
  // Kept only where the suffix is at most this many samples, which it holds in a set
  // (whether it settles anything depends on the cap: `cap` of the suffix's longest
  // against half the budget, at any world size).
  static constexpr uint64_t kMostSuffix = 1 << 16;

  LightTailBound(const WindowPlanner& planner, const std::vector<Entry>& leftover)
      : planner_(planner) {
    const uint64_t cap = planner.limits_.cap;
    if (cap == kNoBatchCap || cap > kMostSuffix / planner.world_size_) return;
    suffix_size_ = cap * planner.world_size_;
    for (const Entry& e : leftover) add(e);
  }

  void add(const Entry& e) {
    if (suffix_size_ == 0) return;
    mass_ += planner_.options_.cost.per_sample(e.length);
    shortest_ = std::min(shortest_, e.length);
    if (suffix_.size() == suffix_size_) {
      if (!by_key(*suffix_.begin(), e)) return;
      suffix_lengths_.erase(suffix_lengths_.find(suffix_.begin()->length));
      suffix_.erase(suffix_.begin());
    }
    suffix_.insert(e);
    suffix_lengths_.insert(e.length);
  }

  // True only where last_final_step_light would be: more than one step of mass, and
  // the suffix's bound under half of what the leftover's shortest sample could reach on
  // every rank (reachable grows with the length, and the last step's longest is no
  // shorter). Margins keep rounding on the safe side.
  bool surely_light() const {
    if (suffix_.empty()) return false;
    const double W = static_cast<double>(planner_.world_size_);
    if (!(mass_ > W * planner_.limits_.budget * (1 + 1e-9))) return false;
    const double tail = static_cast<double>(suffix_.size()) *
                        planner_.options_.cost.per_sample(*suffix_lengths_.rbegin());
    return tail * (1 + 1e-9) < 0.5 * planner_.reachable(shortest_) * W;
  }

 private:
  struct KeyOrder {
    bool operator()(const Entry& a, const Entry& b) const { return by_key(a, b); }
  };
  const WindowPlanner& planner_;
  uint64_t suffix_size_ = 0;  // W x cap; 0: no bound kept
  double mass_ = 0;
  uint64_t shortest_ = UINT64_MAX;
  std::set<Entry, KeyOrder> suffix_;  // the last suffix_size_ samples in key order
  std::multiset<uint64_t> suffix_lengths_;
};

// A final cut is balanced only if every rank can reach the level of the leftover's
// most expensive sample (and at least half the budget, so the last step is not a
// near-empty one): the cheapest planned steps are taken back until the mass suffices.
// More lumps than ranks force a second final step, which the lumps' mass may leave
// nearly empty: then the finest-grained steps (most samples, so they can be cut to any
// level) are taken back until that last step can reach half the budget on every rank.
void WindowPlanner::take_back_until_levellable(Work& work) const {
  take_back_until_mass_suffices(work);
  take_back_until_last_step_full(work);
}

// The last planned step taken back while the leftover's mass is short. Its mass, its
// dearest sample and its longest are kept as steps join it, in the order a sum over
// the leftover would add them.
void WindowPlanner::take_back_until_mass_suffices(Work& work) const {
  const double W = static_cast<double>(world_size_);
  double mass = 0, largest = 0;
  uint64_t longest = 1;
  auto add = [&](const Entry& e) {
    const double c = options_.cost.per_sample(e.length);
    mass += c;
    largest = std::max(largest, c);
    longest = std::max(longest, e.length);
  };
  for (const Entry& e : work.leftover) add(e);
  while (!work.planned.empty() && mass < W * std::max(largest, 0.5 * reachable(longest))) {
    for (const Batch& b : work.planned.back().batches) {
      for (const Entry& e : b.entries) add(e);
      work.leftover.insert(work.leftover.end(), b.entries.begin(), b.entries.end());
    }
    work.planned.pop_back();
  }
}

// The finest planned step (most samples; the first of equal ones) taken back while the
// final cut's last step is light. Steps are taken in that order (finest_first); where
// LightTailBound shows the last step light, without cutting or sorting the leftover.
void WindowPlanner::take_back_until_last_step_full(Work& work) const {
  std::vector<size_t> finest_first(work.planned.size());
  std::iota(finest_first.begin(), finest_first.end(), size_t{0});
  std::stable_sort(finest_first.begin(), finest_first.end(), [&](size_t x, size_t y) {
    return work.planned[x].samples > work.planned[y].samples;
  });
  std::vector<bool> taken(work.planned.size(), false);
  // Kept once the loop has taken back kStepsBeforeBound steps: most ends take back none
  // or a few, and pay nothing for it.
  std::optional<LightTailBound> bound;
  bool sorted = false;  // the leftover in key order, as last_final_step_light leaves it
  for (size_t k = 0; k < finest_first.size(); ++k) {
    const size_t step = finest_first[k];
    if (!bound && k == kStepsBeforeBound) bound.emplace(*this, work.leftover);
    if (bound && bound->surely_light()) {
      sorted = false;  // nothing reads the order until an exact check sorts it
    } else {
      if (!last_final_step_light(work.leftover)) break;
      sorted = true;
    }
    if (work.planned[step].samples <= world_size_) break;
    const auto before = static_cast<std::ptrdiff_t>(work.leftover.size());
    for (const Batch& b : work.planned[step].batches) {
      if (bound)
        for (const Entry& e : b.entries) bound->add(e);
      work.leftover.insert(work.leftover.end(), b.entries.begin(), b.entries.end());
    }
    taken[step] = true;
    // Sorted and merged in, so the next check does not sort it all again.
    if (sorted) {
      const auto middle = work.leftover.begin() + before;
      std::sort(middle, work.leftover.end(), by_key);
      std::inplace_merge(work.leftover.begin(), middle, work.leftover.end(), by_key);
    }
  }
  sort_by_key(work.leftover);
  size_t kept = 0;
  for (size_t k = 0; k < work.planned.size(); ++k) {
    if (taken[k]) continue;
    if (kept != k) work.planned[kept] = std::move(work.planned[k]);  // not onto itself
    ++kept;
  }
  work.planned.erase(work.planned.begin() + static_cast<std::ptrdiff_t>(kept), work.planned.end());
}

}  // namespace evenfeed
