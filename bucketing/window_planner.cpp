#include "bucketing/window_planner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bucketing/lump_runs.h"
#include "core/philox.h"

namespace evenfeed {

// Samples per batch at or above which a sample is a filler: fine enough grain to cut
// a batch to any cost level within a few percent.
static constexpr uint64_t kFillerPerBatch = 16;
// The widest sort noise any sample gets, in log length (a factor of about 3,000): in
// practice BucketingOptions::noise_padding bounds it first.
static constexpr double kMaxNoise = 8.0;
// A final step whose dearest batch costs at most this times the mean is level enough.
static constexpr double kLevelEnough = 1.04;
// A final step split in two may hold this many times its padded slots (cutting W ways
// twice moves the boundaries between long samples; the padding target is 2%).
static constexpr double kSplitSlack = 1.02;
// At most this many lumps are placed by plan_lump_runs (quadratic in their number);
// more are dense enough to be cut W at a time.
static constexpr size_t kMostLumpsPlaced = 1024;
// Seeded shuffles tried when choosing a window's step order.
static constexpr int kOrderTries = 32;

struct WindowPlanner::Entry {
  uint64_t id;
  uint64_t length;
  double key;
  uint64_t tie;
};

struct WindowPlanner::Batch {
  std::vector<Entry> entries;
  uint64_t longest = 0;
  double cost = 0;
};

struct WindowPlanner::Planned {
  std::vector<Batch> batches;
  double mean_length = 0;
  uint64_t samples = 0;
};

WindowPlanner::WindowPlanner(const BucketingOptions& options, uint32_t world_size, uint64_t seed,
                             uint32_t epoch)
    : options_(options),
      world_size_(world_size),
      seed_(seed),
      epoch_(epoch),
      budget_(options.cost.budget(options.tokens_per_rank)),
      cap_(options.max_batch_size > 0 ? options.max_batch_size : UINT64_MAX),
      token_bound_(options.max_batch_tokens) {}

// The most samples of `length` tokens one batch may hold: within the cost budget, the
// token bound (max_batch_tokens) and the sample cap; at least one.
uint64_t WindowPlanner::per_batch(uint64_t length) const {
  const double fit = std::floor(budget_ / options_.cost.per_sample(length));
  uint64_t most = std::min(static_cast<uint64_t>(fit), cap_);
  if (token_bound_ > 0) most = std::min(most, token_bound_ / length);
  return std::max<uint64_t>(most, 1);
}

// Whether `count` samples padded to `longest` tokens make an allowed batch.
bool WindowPlanner::fits(uint64_t count, uint64_t longest) const {
  return count <= cap_ && options_.cost.batch(count, longest) <= budget_ &&
         (token_bound_ == 0 || count * longest <= token_bound_);
}

// What a full batch of samples of `length` tokens can cost, ignoring the sample cap
// and the integer grain: the budget, unless a token bound keeps short samples below it
// (under the quadratic model, M (a + L) for a bound of M tokens).
double WindowPlanner::reachable(uint64_t length) const {
  if (token_bound_ == 0) return budget_;
  return std::min(budget_, options_.cost.per_sample(length) * static_cast<double>(token_bound_) /
                               static_cast<double>(length));
}

std::vector<WindowPlanner::Entry> WindowPlanner::noisy_sort(
    const std::vector<PlanItem>& items) const {
  std::vector<Entry> entries(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    entries[i] = {items[i].id, items[i].length, 0,
                  mix64(seed_ ^ mix64(items[i].id + (uint64_t{epoch_} << 40)))};
  }
  auto by_length = [](const Entry& a, const Entry& b) {
    return a.length != b.length ? a.length < b.length
           : a.tie != b.tie     ? a.tie < b.tie
                                : a.id < b.id;
  };
  std::sort(entries.begin(), entries.end(), by_length);
  // Noise width: the log-length gap to the neighbour `noise` batches further up, capped
  // in proportion to how many samples share a batch at this length (relative to the
  // window's median): padding is paid per token and pairs per sample, so short, cheap
  // samples get wide noise and samples that fill a batch alone get none.
  const double median_per_batch =
      entries.empty() ? 1.0 : static_cast<double>(per_batch(entries[entries.size() / 2].length));
  double mean_length = 0;
  for (const Entry& e : entries) mean_length += static_cast<double>(e.length);
  mean_length /= static_cast<double>(std::max<size_t>(entries.size(), 1));
  const double padding_allowance = options_.noise_padding * mean_length;
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t n = per_batch(entries[i].length);
    double width = 0;
    if (n > 1) {
      const size_t j =
          std::min(entries.size() - 1, i + static_cast<size_t>(std::ceil(options_.noise * n)));
      const double widened =
          options_.noise_cap * std::pow(static_cast<double>(n) / median_per_batch, 1.5);
      const double cap = std::min(kMaxNoise, std::max(options_.noise_floor, widened));
      width = std::min(cap, std::log(static_cast<double>(entries[j].length)) -
                                std::log(static_cast<double>(entries[i].length)));
      // A sample sorted up by `width` may be padded by about length x (e^width - 1)
      // tokens: keep that under the allowance, whatever the sample's length.
      width =
          std::min(width, std::log1p(padding_allowance / static_cast<double>(entries[i].length)));
    }
    CounterRng rng(seed_, RngStream::kSortNoise, epoch_, entries[i].id);
    // Only lengths are read above, so the key can be written in place.
    entries[i].key = std::log(static_cast<double>(entries[i].length)) + rng.uniform() * width;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key > b.key : a.tie != b.tie ? a.tie < b.tie : a.id < b.id;
  });
  return entries;
}

// Greedy token-budget batches over entries in the given (longest-first) order.
std::vector<WindowPlanner::Batch> WindowPlanner::pack(const std::vector<Entry>& entries) const {
  std::vector<Batch> batches;
  for (const Entry& e : entries) {
    if (!batches.empty()) {
      Batch& b = batches.back();
      const uint64_t longest = std::max(b.longest, e.length);
      const uint64_t count = b.entries.size() + 1;
      if (fits(count, longest)) {
        b.entries.push_back(e);
        b.longest = longest;
        b.cost = options_.cost.batch(count, longest);
        continue;
      }
    }
    batches.push_back({{e}, e.length, options_.cost.per_sample(e.length)});
  }
  return batches;
}

double WindowPlanner::noisy_sort_padding(const std::vector<PlanItem>& items) const {
  double slots = 0, tokens = 0;
  for (const Batch& b : pack(noisy_sort(items))) {
    slots += static_cast<double>(b.entries.size()) * static_cast<double>(b.longest);
    for (const Entry& e : b.entries) tokens += static_cast<double>(e.length);
  }
  return slots > 0 ? 1.0 - tokens / slots : 0.0;
}

// The most a batch of two or more samples can cost under the token bound (the budget
// when there is none): a sample costing more is a lump, matched only by other lumps.
double WindowPlanner::lump_level() const {
  if (token_bound_ == 0) return budget_;
  return std::min(budget_, 2 * options_.cost.per_sample(token_bound_ / 2));
}

// A lump: a sample longer than half the token bound, so alone in its batch, when a
// batch of two or more samples cannot reach the budget (a superlinear cost model).
bool WindowPlanner::is_lump(const Entry& e) const {
  return token_bound_ > 0 && lump_level() < budget_ && e.length > token_bound_ / 2;
}

size_t WindowPlanner::lump_count(const std::vector<Entry>& entries) const {
  return static_cast<size_t>(
      std::count_if(entries.begin(), entries.end(), [&](const Entry& e) { return is_lump(e); }));
}

// Moves into `leftover` the planned steps whose dearest batch costs at least half the
// lump level: their batches are the partners that can come near a lump's cost.
void WindowPlanner::take_back_partners(std::vector<Planned>& planned,
                                       std::vector<Entry>& leftover) const {
  const double useful = 0.5 * lump_level();
  std::erase_if(planned, [&](const Planned& step) {
    double dearest = 0;
    for (const Batch& b : step.batches) dearest = std::max(dearest, b.cost);
    if (dearest < useful) return false;
    for (const Batch& b : step.batches)
      leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
    return true;
  });
}

// The leftover's lumps, placed by plan_lump_runs: each step a run of the dearest lumps
// left, its other ranks given the dearest batches of the rest of the leftover (cut at
// the budget in key order). What the steps do not take stays in `leftover`.
std::vector<WindowPlanner::Planned> WindowPlanner::place_lumps(std::vector<Entry>& leftover) const {
  std::vector<Entry> lumps, rest;
  for (const Entry& e : leftover) (is_lump(e) ? lumps : rest).push_back(e);
  if (lumps.empty() || lumps.size() > kMostLumpsPlaced) return {};
  std::sort(lumps.begin(), lumps.end(), [](const Entry& a, const Entry& b) {
    return a.length != b.length ? a.length > b.length : by_key(a, b);
  });
  std::sort(rest.begin(), rest.end(), by_key);
  std::vector<Batch> partners = segment_at(rest, budget_);
  std::stable_sort(partners.begin(), partners.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  std::vector<double> lump_costs, partner_costs;
  for (const Entry& e : lumps) lump_costs.push_back(options_.cost.per_sample(e.length));
  for (const Batch& b : partners) partner_costs.push_back(b.cost);
  const std::optional<LumpRuns> runs = plan_lump_runs(lump_costs, partner_costs, world_size_);
  if (!runs) return {};
  // The runs' batches in one list (lumps, then the partners used), each step a list
  // of indices into it, levelled further by swaps between steps.
  std::vector<Batch> units;
  for (size_t k = 0; k < lumps.size(); ++k)
    units.push_back({{lumps[k]}, lumps[k].length, lump_costs[k]});
  std::vector<std::vector<size_t>> members;
  size_t lump = 0, partner = 0;
  for (size_t run : runs->lumps_per_step) {
    std::vector<size_t> step;
    for (size_t k = 0; k < run; ++k) step.push_back(lump++);
    while (step.size() < world_size_) {
      step.push_back(units.size());
      units.push_back(std::move(partners[partner++]));
    }
    members.push_back(std::move(step));
  }
  std::vector<double> unit_costs;
  for (const Batch& b : units) unit_costs.push_back(b.cost);
  swap_to_level(unit_costs, members, members.size() * world_size_);
  std::vector<Planned> steps;
  for (const std::vector<size_t>& step : members) {
    std::vector<Batch> batches;
    for (size_t k : step) batches.push_back(std::move(units[k]));
    steps.push_back(make_step(std::move(batches)));
  }
  leftover.clear();
  for (; partner < partners.size(); ++partner) {
    const Batch& b = partners[partner];
    leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
  }
  return steps;
}

// Whether a batch of `cap_` samples like `e` costs at least `level` (within the level
// tolerance): shorter ones fill the sample cap before they reach it.
bool WindowPlanner::reaches_at_cap(const Entry& e, double level) const {
  return options_.cost.per_sample(e.length) * static_cast<double>(per_batch(e.length)) >=
         level * (1 - options_.level_tolerance);
}

// A batch of the shortest fillers (taken from the back) costing as close to `level`
// as their grain allows, never more. With a sample cap or token bound, fillers too
// short to reach the level even at the cap are passed over (they stay for a cheaper
// level): a batch of them would leave its step light (unless `from_shortest`). Empty
// when no filler is left that can reach it. `unreachable`, when given, is where the
// search for a reachable filler starts (those from there on were found unreachable at
// a level no higher), and is set to where the next search may start.
WindowPlanner::Batch WindowPlanner::cut_to_level(std::vector<Entry>& fillers, double level,
                                                 bool from_shortest, size_t* unreachable) const {
  size_t end = fillers.size();
  if (bounded() && !from_shortest) {
    if (unreachable != nullptr) end = std::min(end, *unreachable);
    while (end > 0 && !reaches_at_cap(fillers[end - 1], level)) --end;
  }
  Batch b;
  size_t begin = end;
  while (begin > 0 && b.entries.size() < cap_) {
    const Entry& e = fillers[begin - 1];
    const uint64_t longest = std::max(b.longest, e.length);
    const double cost = options_.cost.batch(b.entries.size() + 1, longest);
    if (!b.entries.empty() && (cost > level || !fits(b.entries.size() + 1, longest))) break;
    b.entries.push_back(e);
    b.longest = longest;
    b.cost = cost;
    --begin;
  }
  fillers.erase(fillers.begin() + static_cast<long>(begin),
                fillers.begin() + static_cast<long>(end));
  if (unreachable != nullptr) *unreachable = begin;
  return b;
}

WindowPlanner::Planned WindowPlanner::make_step(std::vector<Batch> batches) const {
  Planned p;
  batches.resize(world_size_);  // ranks without a batch get an empty one
  p.batches = std::move(batches);
  count_samples(p);
  return p;
}

// Sets `step`'s sample count and mean sample length from its batches.
void WindowPlanner::count_samples(Planned& step) {
  uint64_t count = 0;
  double total = 0;
  for (const Batch& b : step.batches) {
    for (const Entry& e : b.entries) total += static_cast<double>(e.length);
    count += b.entries.size();
  }
  step.mean_length = count > 0 ? total / static_cast<double>(count) : 0;
  step.samples = count;
}

// Greedy contiguous segments of `entries`, in their order, each costing at most `level`
// (or holding one sample that alone costs more).
std::vector<WindowPlanner::Batch> WindowPlanner::segment_at(const std::vector<Entry>& entries,
                                                            double level) const {
  std::vector<Batch> segments;
  for (const Entry& e : entries) {
    if (!segments.empty()) {
      Batch& b = segments.back();
      const uint64_t longest = std::max(b.longest, e.length);
      const double cost = options_.cost.batch(b.entries.size() + 1, longest);
      if (fits(b.entries.size() + 1, longest) && cost <= level) {
        b.entries.push_back(e);
        b.longest = longest;
        b.cost = cost;
        continue;
      }
    }
    segments.push_back({{e}, e.length, options_.cost.per_sample(e.length)});
  }
  return segments;
}

// Contiguous segments (in key order) of `entries` filling `slots` batches, whose most
// expensive batch is as cheap as possible; fewer when there are fewer entries.
std::vector<WindowPlanner::Batch> WindowPlanner::cut_into(const std::vector<Entry>& entries,
                                                          size_t slots) const {
  double total = 0, largest = 0;
  for (const Entry& e : entries) {
    total += options_.cost.per_sample(e.length);
    largest = std::max(largest, options_.cost.per_sample(e.length));
  }
  auto segment = [&](double level) { return segment_at(entries, level); };
  // Bisection on the level: the cheapest level that needs no more than `slots` batches.
  double lo = std::max(largest, total / static_cast<double>(slots)), hi = budget_;
  if (lo < hi) {
    for (int iteration = 0; iteration < 60 && hi - lo > 1e-9 * hi; ++iteration) {
      const double mid = 0.5 * (lo + hi);
      (segment(mid).size() <= slots ? hi : lo) = mid;
    }
  }
  std::vector<Batch> segments = segment(hi);
  // Use every slot: split the most expensive divisible batch until there are enough.
  while (segments.size() < slots) {
    size_t worst = segments.size();
    for (size_t k = 0; k < segments.size(); ++k) {
      if (segments[k].entries.size() >= 2 &&
          (worst == segments.size() || segments[k].cost > segments[worst].cost)) {
        worst = k;
      }
    }
    if (worst == segments.size()) break;
    Batch& b = segments[worst];
    Batch tail;
    tail.entries.assign(b.entries.begin() + static_cast<long>(b.entries.size() / 2),
                        b.entries.end());
    b.entries.resize(b.entries.size() / 2);
    for (Batch* part : {&b, &tail}) {
      part->longest = 0;
      for (const Entry& e : part->entries) part->longest = std::max(part->longest, e.length);
      part->cost = options_.cost.batch(part->entries.size(), part->longest);
    }
    segments.push_back(std::move(tail));
  }
  std::stable_sort(segments.begin(), segments.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  return segments;
}

// Longest (noisy key) first; ties by a per-epoch hash, then id.
bool WindowPlanner::by_key(const Entry& a, const Entry& b) {
  return a.key != b.key ? a.key > b.key : a.tie != b.tie ? a.tie < b.tie : a.id < b.id;
}

// Steps a final cut of `entries` takes: enough for their mass at the full budget, and
// for their segments at the full budget in key order. Sorts `entries` by key.
size_t WindowPlanner::final_step_count(std::vector<Entry>& entries) const {
  std::sort(entries.begin(), entries.end(), by_key);
  double total = 0;
  for (const Entry& e : entries) total += options_.cost.per_sample(e.length);
  const double per_step = static_cast<double>(world_size_) * budget_;
  size_t steps = std::max<size_t>(1, static_cast<size_t>(std::ceil(total / per_step)));
  while (segment_at(entries, budget_).size() > steps * world_size_) ++steps;
  return steps;
}

// True when a final cut of `entries` would take more than one step and its last step
// could not give every rank half the budget. Sorts `entries` by key.
bool WindowPlanner::last_final_step_light(std::vector<Entry>& entries) const {
  const size_t steps = final_step_count(entries);
  if (steps <= 1) return false;
  const std::vector<Batch> segments = cut_into(entries, steps * world_size_);
  double tail = 0;
  for (size_t k = (steps - 1) * world_size_; k < segments.size(); ++k) tail += segments[k].cost;
  uint64_t longest = 1;
  for (size_t k = (steps - 1) * world_size_; k < segments.size(); ++k)
    longest = std::max(longest, segments[k].longest);
  return tail < 0.5 * reachable(longest) * static_cast<double>(world_size_);
}

// The epoch's leftover (or a window's, when it cannot be carried): cut into steps of
// exactly W batches, contiguous in key order so padding stays low. All steps but the
// last take the most expensive segments at one level; the last step's entries are cut
// again to a level of their own, so a light last step is balanced too.
std::vector<WindowPlanner::Planned> WindowPlanner::final_cut(std::vector<Entry> leftover) const {
  std::vector<Planned> planned;
  if (leftover.empty()) return planned;
  const size_t W = world_size_;
  const size_t step_count = final_step_count(leftover);
  std::vector<Batch> segments = cut_into(leftover, step_count * W);
  const size_t head = (step_count - 1) * W;
  if (segments.size() > head + W || (step_count > 1 && segments.size() > head)) {
    std::vector<Entry> rest;
    for (size_t k = head; k < segments.size(); ++k)
      rest.insert(rest.end(), segments[k].entries.begin(), segments[k].entries.end());
    std::sort(rest.begin(), rest.end(), by_key);
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
  double total = 0, dearest = 0;
  for (const Batch& b : batches) {
    total += b.cost;
    dearest = std::max(dearest, b.cost);
  }
  return total > 0 ? dearest * static_cast<double>(world_size_) / total : 1.0;
}

// A final step whose cheapest batches are short fillers far below the rest (a thousand
// one-word paragraphs after a few dozen mid-length ones) cannot be levelled by cutting
// it W ways: the short ones would be padded to the long ones' length. Such a step is
// split in two, the longer samples cut W ways and the shortest (in key order) W ways,
// when the shortest are fillers enough to give every rank a filler's grain and both
// steps end more level than the one, with at most kSplitSlack times its padded slots.
// Tried as the shortest: each run of the step's segments from the short end, and all
// the fillers after its last coarse sample. The epoch gets one more, lighter step.
std::vector<std::vector<WindowPlanner::Batch>> WindowPlanner::split_off_light_tail(
    std::vector<Batch> step) const {
  const size_t W = world_size_;
  const double before = imbalance(step);
  if (step.size() < W || before <= kLevelEnough) return {std::move(step)};
  std::vector<Entry> entries;
  for (const Batch& b : step) entries.insert(entries.end(), b.entries.begin(), b.entries.end());
  std::sort(entries.begin(), entries.end(), by_key);
  std::vector<size_t> tails;
  std::sort(step.begin(), step.end(), [](const Batch& a, const Batch& b) {
    return by_key(a.entries.front(), b.entries.front());
  });
  for (size_t k = step.size(), tail = 0; k-- > 1;) tails.push_back(tail += step[k].entries.size());
  size_t fillers = 0;
  while (fillers < entries.size() &&
         per_batch(entries[entries.size() - 1 - fillers].length) >= kFillerPerBatch)
    ++fillers;
  tails.push_back(fillers);

  std::vector<std::vector<Batch>> best{std::move(step)};
  double best_imbalance = before, slots_before = slots(best[0]);
  for (size_t tail : tails) {
    if (tail < W * kFillerPerBatch || tail >= entries.size()) continue;
    const auto first_short = entries.end() - static_cast<long>(tail);
    if (per_batch(std::max_element(first_short, entries.end(), [](const Entry& a, const Entry& b) {
                    return a.length < b.length;
                  })->length) < kFillerPerBatch)
      continue;
    std::vector<Batch> longer = cut_into({entries.begin(), first_short}, W);
    std::vector<Batch> shorter = cut_into({first_short, entries.end()}, W);
    const double after = std::max(imbalance(longer), imbalance(shorter));
    if (after < best_imbalance && slots(longer) + slots(shorter) <= kSplitSlack * slots_before) {
      best_imbalance = after;
      best = {std::move(longer), std::move(shorter)};
    }
  }
  return best;
}

// Padded token slots of `batches` (count x longest, summed).
double WindowPlanner::slots(const std::vector<Batch>& batches) {
  double total = 0;
  for (const Batch& b : batches)
    total += static_cast<double>(b.entries.size()) * static_cast<double>(b.longest);
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

// A final step's lightest batch, when its samples are too few and too far in length
// from the rest to be levelled by cutting (a few short samples after mid-length ones),
// takes samples from the finest-grained planned step: from each of that step's batches
// in turn, the longest sample that does not lengthen the light batch (so nothing it
// holds is padded more), until the light batch reaches the step's dearest. Kept only if
// the step gets more level and the donor ends no less level than the step or than it
// was. Returns whether anything moved.
bool WindowPlanner::borrow_for_lightest(std::vector<Planned>& planned, Planned& step) const {
  const double before = imbalance(step);
  if (before <= kLevelEnough) return false;
  auto donor =
      std::max_element(planned.begin(), planned.end(),
                       [](const Planned& x, const Planned& y) { return x.samples < y.samples; });
  if (donor == planned.end() || donor->samples < 2 * world_size_) return false;
  auto light = std::min_element(step.batches.begin(), step.batches.end(),
                                [](const Batch& x, const Batch& y) { return x.cost < y.cost; });
  double dearest = 0;
  for (const Batch& b : step.batches) dearest = std::max(dearest, b.cost);
  const Planned donor_before = *donor;
  const Batch light_before = *light;
  for (bool moved = true; moved;) {
    moved = false;
    for (Batch& from : donor->batches) {
      if (from.entries.size() < 2) continue;
      auto pick = from.entries.end();
      for (auto it = from.entries.begin(); it != from.entries.end(); ++it) {
        if (it->length <= light->longest &&
            (pick == from.entries.end() || it->length > pick->length))
          pick = it;
      }
      if (pick == from.entries.end()) continue;
      const double cost = options_.cost.batch(light->entries.size() + 1, light->longest);
      if (cost > dearest || !fits(light->entries.size() + 1, light->longest)) break;
      light->entries.push_back(*pick);
      light->cost = cost;
      from.entries.erase(pick);
      moved = true;
    }
  }
  for (Batch& b : donor->batches) recost(b);
  count_samples(*donor);
  const double after = imbalance(step);
  if (after >= before || imbalance(*donor) > std::max(after, imbalance(donor_before))) {
    *donor = donor_before;
    *light = light_before;
    return false;
  }
  count_samples(step);
  return true;
}

double WindowPlanner::emit_in_chosen_order(std::vector<Planned>& planned, uint64_t window_index,
                                           double previous_mean,
                                           std::vector<StepBatches>& steps) const {
  const size_t n = planned.size();
  std::vector<size_t> best(n);
  std::iota(best.begin(), best.end(), size_t{0});
  if (n >= 3) {
    double mean = 0;
    for (const Planned& p : planned) mean += p.mean_length;
    mean /= static_cast<double>(n);
    double variance = 0;
    for (const Planned& p : planned) variance += (p.mean_length - mean) * (p.mean_length - mean);
    auto lag1 = [&](const std::vector<size_t>& order) {
      double sum = 0;
      if (previous_mean >= 0)
        sum += (previous_mean - mean) * (planned[order[0]].mean_length - mean);
      for (size_t k = 0; k + 1 < n; ++k) {
        sum += (planned[order[k]].mean_length - mean) * (planned[order[k + 1]].mean_length - mean);
      }
      return variance > 0 ? std::fabs(sum / variance) : 0.0;
    };
    double best_score = 1e300;
    std::vector<size_t> order(n);
    for (int attempt = 0; attempt < kOrderTries; ++attempt) {
      std::iota(order.begin(), order.end(), size_t{0});
      CounterRng rng(seed_, RngStream::kStepOrder, epoch_, window_index * kOrderTries + attempt);
      for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      const double score = lag1(order);
      if (score < best_score) {
        best_score = score;
        best = order;
      }
    }
  }
  for (size_t k : best) {
    StepBatches step(world_size_);
    for (uint32_t r = 0; r < world_size_; ++r) {
      for (const Entry& e : planned[k].batches[r].entries) step[r].samples.push_back(e.id);
    }
    steps.push_back(std::move(step));
  }
  return best.empty() ? previous_mean : planned[best.back()].mean_length;
}

double WindowPlanner::plan(std::vector<PlanItem> items, bool last, uint64_t window_index,
                           double previous_mean, std::vector<StepBatches>& steps,
                           std::vector<PlanItem>& carry) const {
  const size_t W = world_size_;
  std::vector<Entry> coarse, fillers;  // both longest first
  for (const Entry& e : noisy_sort(items))
    (per_batch(e.length) >= kFillerPerBatch ? fillers : coarse).push_back(e);
  items.clear();
  items.shrink_to_fit();

  std::vector<Planned> planned;
  std::vector<Entry> leftover;
  auto give_back = [&](const std::vector<Batch>& batches) {
    for (const Batch& b : batches)
      leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
  };
  // Coarse batches, grouped by cost level and completed with fillers cut to the level.
  std::vector<Batch> coarse_batches = pack(coarse);
  std::stable_sort(coarse_batches.begin(), coarse_batches.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  struct Group {
    std::vector<Batch> batches;
    double level;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < coarse_batches.size();) {
    const double level = coarse_batches[i].cost;
    size_t j = i;
    while (j < coarse_batches.size() && j - i < W &&
           coarse_batches[j].cost >= level * (1 - options_.level_tolerance))
      ++j;
    groups.push_back({{coarse_batches.begin() + static_cast<long>(i),
                       coarse_batches.begin() + static_cast<long>(j)},
                      level});
    i = j;
  }
  // Complete the cheapest levels first: when fillers run short, what is left over is
  // then the most expensive samples, which are alike (often documents truncated to the
  // budget) and balance among themselves in the final cut; mixed mid-level lumps would
  // not.
  // With a sample cap or token bound, the most a batch of fillers can cost (before any
  // is taken): a group above it cannot be completed, and cut_to_level would scan every
  // filler to find that out, once per group.
  double filler_reach = 0;
  for (const Entry& e : fillers)
    filler_reach = std::max(filler_reach, options_.cost.per_sample(e.length) *
                                              static_cast<double>(per_batch(e.length)));
  // Levels only rise in this loop, so fillers found unreachable stay so: each search
  // starts where the last one found nothing (`unreachable`, meaningful when bounded).
  size_t unreachable = fillers.size();
  for (size_t g = groups.size(); g-- > 0;) {
    std::vector<Batch>& group = groups[g].batches;
    const bool reachable =
        !bounded() || !(filler_reach < groups[g].level * (1 - options_.level_tolerance));
    while (reachable && group.size() < W) {
      Batch filler = cut_to_level(fillers, groups[g].level, false, &unreachable);
      if (filler.entries.empty()) break;
      group.push_back(std::move(filler));
    }
    if (group.size() == W) {
      planned.push_back(make_step(std::move(group)));
    } else {
      give_back(group);
    }
  }
  // The remaining fillers. Those that can fill the budget are packed at it and the
  // batches, sorted by cost, form steps W at a time. Those that a sample cap keeps
  // from filling it ("capped") would give batches whose costs jump with integer
  // lengths; they are cut shortest first, W batches per step, the step's first batch
  // at the cap and the others to its cost.
  std::vector<Entry> capped;
  if (bounded()) {
    std::vector<Entry> full;
    for (const Entry& e : fillers) (reaches_at_cap(e, budget_) ? full : capped).push_back(e);
    fillers = std::move(full);
  }
  std::vector<Batch> filler_batches = pack(fillers);
  std::stable_sort(filler_batches.begin(), filler_batches.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  const size_t whole = filler_batches.size() / W * W;
  for (size_t k = 0; k < whole; k += W) {
    planned.push_back(make_step({filler_batches.begin() + static_cast<long>(k),
                                 filler_batches.begin() + static_cast<long>(k + W)}));
  }
  give_back({filler_batches.begin() + static_cast<long>(whole), filler_batches.end()});
  // Capped steps stay apart from the rest: their samples cannot reach the levels of
  // coarse lumps, so they are neither taken back nor borrowed from for a final cut.
  std::vector<Planned> capped_steps;
  while (!capped.empty()) {
    std::vector<Batch> step{cut_to_level(capped, budget_, true)};
    const double level = step.front().cost;
    while (step.size() < W) {
      Batch b = cut_to_level(capped, level);
      if (b.entries.empty()) break;
      step.push_back(std::move(b));
    }
    if (step.size() < W) {
      for (const Batch& b : step) capped.insert(capped.end(), b.entries.begin(), b.entries.end());
      break;
    }
    capped_steps.push_back(make_step(std::move(step)));
  }

  // Carry what is left into the next window, unless this is the last one or the carry
  // would outgrow a window (then it is cut here, as well as it can be).
  if (!last && leftover.size() + capped.size() <= std::max<uint64_t>(options_.window, W)) {
    for (const Entry& e : leftover) carry.push_back({e.id, e.length});
    for (const Entry& e : capped) carry.push_back({e.id, e.length});
  } else {
    // Capped samples left over are cut into steps of their own, level among
    // themselves, when every rank can get a filler's grain of them; fewer join the rest.
    if (capped.size() >= W * kFillerPerBatch) {
      for (Planned& p : final_cut(std::move(capped))) capped_steps.push_back(std::move(p));
    } else {
      leftover.insert(leftover.end(), capped.begin(), capped.end());
    }
    // Under a token bound, lumps first: they take the dearest of the rest as partners,
    // which are mostly in this window's planned steps of mid-length samples.
    if (const size_t lumps = lump_count(leftover); lumps > 0 && lumps <= kMostLumpsPlaced) {
      take_back_partners(planned, leftover);
      for (Planned& p : place_lumps(leftover)) capped_steps.push_back(std::move(p));
    }
    // A final cut is balanced only if every rank can reach the level of the leftover's
    // most expensive sample (and at least half the budget, so the last step is not a
    // near-empty one): take back the cheapest filler steps until the mass suffices.
    auto mass_short = [&] {
      double mass = 0, largest = 0;
      uint64_t longest = 1;
      for (const Entry& e : leftover) {
        const double c = options_.cost.per_sample(e.length);
        mass += c;
        largest = std::max(largest, c);
        longest = std::max(longest, e.length);
      }
      return mass < static_cast<double>(W) * std::max(largest, 0.5 * reachable(longest));
    };
    while (!planned.empty() && mass_short()) {
      for (const Batch& b : planned.back().batches)
        leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
      planned.pop_back();
    }
    // More lumps than ranks force a second final step, which the lumps' mass may leave
    // nearly empty: bring in the finest-grained steps (most samples, so they can be cut
    // to any level) until that last step can reach half the budget on every rank.
    while (last_final_step_light(leftover)) {
      auto finest = std::max_element(
          planned.begin(), planned.end(),
          [](const Planned& x, const Planned& y) { return x.samples < y.samples; });
      if (finest == planned.end() || finest->samples <= W) break;
      for (const Batch& b : finest->batches)
        leftover.insert(leftover.end(), b.entries.begin(), b.entries.end());
      planned.erase(finest);
    }
    std::vector<Planned> final_steps = final_cut(std::move(leftover));
    for (Planned& step : final_steps) {
      for (uint32_t k = 0; k < world_size_ && borrow_for_lightest(planned, step); ++k) {
      }
    }
    for (Planned& p : final_steps) planned.push_back(std::move(p));
  }
  for (Planned& p : capped_steps) planned.push_back(std::move(p));
  return emit_in_chosen_order(planned, window_index, previous_mean, steps);
}

}  // namespace evenfeed
