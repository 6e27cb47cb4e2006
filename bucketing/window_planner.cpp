#include "bucketing/window_planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "bucketing/batch_dealing.h"
#include "bucketing/epoch_mates.h"
#include "bucketing/greedy_segments.h"
#include "bucketing/lump_runs.h"
#include "bucketing/window_planner_parts.h"
#include "core/philox.h"

namespace evenfeed {

// The widest sort noise any sample gets, in log length (a factor of about 3,000): in
// practice BucketingOptions::noise_padding bounds it first.
static constexpr double kMaxNoise = 8.0;
// Seeded shuffles tried when choosing a window's step order.
static constexpr int kOrderTries = 32;

WindowPlanner::WindowPlanner(const BucketingOptions& options, uint32_t world_size, uint64_t seed,
                             uint32_t epoch, const EpochMates* previous)
    : options_(options),
      world_size_(world_size),
      seed_(seed),
      epoch_(epoch),
      limits_{.cost = options.cost,
              .budget = options.cost.budget(options.tokens_per_rank),
              .cap = options.max_batch_size > 0 ? options.max_batch_size : kNoBatchCap,
              .token_bound = options.max_batch_tokens},
      previous_(previous),
      final_cuts_(std::make_unique<FinalCuts>()) {}

WindowPlanner::~WindowPlanner() = default;

// The most samples of `length` tokens one batch may hold: within the cost budget, the
// token bound (max_batch_tokens) and the sample cap; at least one.
uint64_t WindowPlanner::per_batch(uint64_t length) const {
  const double fit = std::floor(limits_.budget / options_.cost.per_sample(length));
  uint64_t most = std::min(static_cast<uint64_t>(fit), limits_.cap);
  if (limits_.token_bound > 0) most = std::min(most, limits_.token_bound / length);
  return std::max<uint64_t>(most, 1);
}

// Whether `count` samples padded to `longest` tokens make an allowed batch.
bool WindowPlanner::fits(uint64_t count, uint64_t longest) const {
  return limits_.fits(count, longest);
}

// What a full batch of samples of `length` tokens can cost, ignoring the sample cap
// and the integer grain: the budget, unless a token bound keeps short samples below it
// (under the quadratic model, M (a + L) for a bound of M tokens).
double WindowPlanner::reachable(uint64_t length) const {
  if (limits_.token_bound == 0) return limits_.budget;
  return std::min(limits_.budget, options_.cost.per_sample(length) *
                                      static_cast<double>(limits_.token_bound) /
                                      static_cast<double>(length));
}

// A per-epoch hash of the id that breaks ties between equal lengths and keys.
uint64_t WindowPlanner::tie_of(uint64_t id) const {
  return mix64(seed_ ^ mix64(id + (uint64_t{epoch_} << 40)));
}

// Shortest first; equal lengths by tie_of, then id. The order noisy_sort starts from.
bool WindowPlanner::before_by_length(uint64_t length_a, uint64_t tie_a, uint64_t id_a,
                                     uint64_t length_b, uint64_t tie_b, uint64_t id_b) {
  return length_a != length_b ? length_a < length_b : tie_a != tie_b ? tie_a < tie_b : id_a < id_b;
}

void WindowPlanner::sort_by_length(std::vector<PlanItem>& items) const {
  std::vector<std::pair<uint64_t, PlanItem>> tied(items.size());  // (tie, item)
  for (size_t i = 0; i < items.size(); ++i) tied[i] = {tie_of(items[i].id), items[i]};
  std::sort(tied.begin(), tied.end(), [](const auto& a, const auto& b) {
    return before_by_length(a.second.length, a.first, a.second.id, b.second.length, b.first,
                            b.second.id);
  });
  for (size_t i = 0; i < items.size(); ++i) items[i] = tied[i].second;
}

// What the noisy sort's width takes from a sample's length (see noisy_sort).
WindowPlanner::NoiseReach WindowPlanner::noise_reach(uint64_t length, double median_per_batch,
                                                     double padding_allowance) const {
  NoiseReach reach;
  reach.per_batch = per_batch(length);
  reach.log_length = std::log(static_cast<double>(length));
  if (reach.per_batch > 1) {
    reach.ahead = static_cast<size_t>(std::ceil(options_.noise * reach.per_batch));
    const double widened =
        options_.noise_cap * std::pow(static_cast<double>(reach.per_batch) / median_per_batch, 1.5);
    reach.cap = std::min(kMaxNoise, std::max(options_.noise_floor, widened));
    reach.padding_width = std::log1p(padding_allowance / static_cast<double>(length));
  }
  return reach;
}

std::vector<WindowPlanner::Entry> WindowPlanner::noisy_sort(
    const std::vector<PlanItem>& items) const {
  std::vector<Entry> entries(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    entries[i] = {items[i].id, items[i].length, 0, tie_of(items[i].id)};
  auto by_length = [](const Entry& a, const Entry& b) {
    return before_by_length(a.length, a.tie, a.id, b.length, b.tie, b.id);
  };
  // Callers that sort the same items many times (choosing the noise and the cap) hand
  // them over in this order once (sort_by_length); a window's items never come so, and
  // the check stops at their first pair.
  if (!std::is_sorted(entries.begin(), entries.end(), by_length))
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
  // Everything but the neighbour's length and the random term depends on the sample's
  // length alone, and equal lengths sit together: it is worked out once per length (the
  // same operations on the same values, so the same keys; a window of sentences holds
  // millions of samples of a few thousand lengths, and the automatic cap and noise sort
  // one some twenty times).
  NoiseReach reach;
  double log_neighbour = 0;
  uint64_t neighbour_length = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i == 0 || entries[i].length != entries[i - 1].length)
      reach = noise_reach(entries[i].length, median_per_batch, padding_allowance);
    double width = 0;
    if (reach.per_batch > 1) {
      const uint64_t neighbour = entries[std::min(entries.size() - 1, i + reach.ahead)].length;
      if (neighbour != neighbour_length) {
        neighbour_length = neighbour;
        log_neighbour = std::log(static_cast<double>(neighbour));
      }
      width = std::min(reach.cap, log_neighbour - reach.log_length);
      // A sample sorted up by `width` may be padded by about length x (e^width - 1)
      // tokens: keep that under the allowance, whatever the sample's length.
      width = std::min(width, reach.padding_width);
    }
    CounterRng rng(seed_, RngStream::kSortNoise, epoch_, entries[i].id);
    // Only lengths are read above, so the key can be written in place.
    entries[i].key = reach.log_length + rng.uniform() * width;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key > b.key : a.tie != b.tie ? a.tie < b.tie : a.id < b.id;
  });
  return entries;
}

// The greedy token-budget batch (numbered from 0) of each position of `sorted`, taken
// in order: a sample joins the current batch while `fits(count, longest)` holds for the
// batch with it, else starts the next. Shared by pack and greedy_batches.
template <class Sample, class Fits>
static std::vector<uint32_t> greedy_batch_index(const std::vector<Sample>& sorted, Fits fits) {
  std::vector<uint32_t> batch(sorted.size());
  uint64_t count = 0, longest = 0;
  uint32_t index = 0;
  for (size_t k = 0; k < sorted.size(); ++k) {
    const uint64_t longer = std::max(longest, sorted[k].length);
    if (count > 0 && fits(count + 1, longer)) {
      ++count;
      longest = longer;
    } else {
      index += count > 0 ? 1 : 0;
      count = 1;
      longest = sorted[k].length;
    }
    batch[k] = index;
  }
  return batch;
}

// Greedy token-budget batches over entries in the given (longest-first) order.
std::vector<WindowPlanner::Batch> WindowPlanner::pack(const std::vector<Entry>& entries) const {
  const std::vector<uint32_t> index = greedy_batch_index(
      entries, [this](uint64_t count, uint64_t longest) { return fits(count, longest); });
  std::vector<Batch> batches(entries.empty() ? 0 : index.back() + size_t{1});
  for (size_t k = 0; k < entries.size(); ++k) {
    Batch& b = batches[index[k]];
    b.entries.push_back(entries[k]);
    b.longest = std::max(b.longest, entries[k].length);
  }
  for (Batch& b : batches) b.cost = options_.cost.batch(b.entries.size(), b.longest);
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

std::vector<PlanItem> WindowPlanner::noisy_sorted(const std::vector<PlanItem>& items) const {
  std::vector<PlanItem> sorted;
  sorted.reserve(items.size());
  for (const Entry& e : noisy_sort(items)) sorted.push_back({e.id, e.length});
  return sorted;
}

std::vector<uint32_t> WindowPlanner::greedy_batches(const std::vector<PlanItem>& sorted) const {
  return greedy_batch_index(
      sorted, [this](uint64_t count, uint64_t longest) { return fits(count, longest); });
}

// What the fullest batch of samples of `length` tokens costs (as many as fit).
double WindowPlanner::full_batch_cost(uint64_t length) const {
  return options_.cost.per_sample(length) * static_cast<double>(per_batch(length));
}

// Whether a full batch of samples like `e` costs at least `level` (within the level
// tolerance): with a sample cap or token bound, shorter ones fill it before they reach it.
bool WindowPlanner::reaches_at_cap(const Entry& e, double level) const {
  return full_batch_cost(e.length) >= level * (1 - options_.level_tolerance);
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
    end = skip_unreachable(fillers, end, level);
  }
  const Span span = batch_below(fillers, end, level);
  Batch b{.entries = {fillers.rbegin() + static_cast<long>(fillers.size() - end),
                      fillers.rbegin() + static_cast<long>(fillers.size() - span.begin)},
          .longest = span.longest,
          .cost = span.cost};
  fillers.erase(fillers.begin() + static_cast<long>(span.begin),
                fillers.begin() + static_cast<long>(end));
  if (unreachable != nullptr) *unreachable = span.begin;
  return b;
}

// Where, below `end`, the fillers a batch at `level` may take start: past those at the
// back that a sample cap or token bound keeps from reaching it (none when unbounded).
size_t WindowPlanner::skip_unreachable(const std::vector<Entry>& fillers, size_t end,
                                       double level) const {
  if (!bounded()) return end;
  while (end > 0 && !reaches_at_cap(fillers[end - 1], level)) --end;
  return end;
}

// The batch of fillers[begin, end) taken from `end` down while it stays at or under
// `level`, the cap and the token bound (one sample at least), without copying them.
WindowPlanner::Span WindowPlanner::batch_below(const std::vector<Entry>& fillers, size_t end,
                                               double level) const {
  Span span{.begin = end};
  while (span.begin > 0 && span.count < limits_.cap) {
    const uint64_t longest = std::max(span.longest, fillers[span.begin - 1].length);
    const double cost = options_.cost.batch(span.count + 1, longest);
    if (span.count > 0 && (cost > level || !fits(span.count + 1, longest))) break;
    span.longest = longest;
    span.cost = cost;
    --span.begin;
    ++span.count;
  }
  return span;
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
  for (size_t next = 0; next < entries.size();)
    segments.push_back(take_segment(entries, next, level));
  return segments;
}

// Where the greedy segment of `entries` from `begin` on ends, stopping at `to`
// (scan_segment_end): `longest` is set to its longest sample. Needs begin < to.
size_t WindowPlanner::segment_end(const std::vector<Entry>& entries, size_t begin, size_t to,
                                  double level, uint64_t& longest) const {
  return scan_segment_end(
      to, begin, level, limits_, [&](size_t k) { return entries[k].length; }, longest);
}

// The greedy segments of `entries` at any level, counted without copying a sample
// (greedy_segments.h): the bisections of cut_into and final_step_count ask only how
// many, up to 60 times per cut.
GreedySegments WindowPlanner::segments_of(const std::vector<Entry>& entries) const {
  std::vector<uint64_t> lengths(entries.size());
  for (size_t k = 0; k < entries.size(); ++k) lengths[k] = entries[k].length;
  return GreedySegments(std::move(lengths), limits_);
}

// The greedy segment of `entries` from `next` on (segment_end); `next` moves past it.
WindowPlanner::Batch WindowPlanner::take_segment(const std::vector<Entry>& entries, size_t& next,
                                                 double level) const {
  Batch b;
  const size_t end = segment_end(entries, next, entries.size(), level, b.longest);
  b.entries.assign(entries.begin() + static_cast<long>(next),
                   entries.begin() + static_cast<long>(end));
  b.cost = options_.cost.batch(b.entries.size(), b.longest);
  next = end;
  return b;
}

// Contiguous segments (in key order) of `entries` filling `slots` batches, whose most
// expensive batch is as cheap as possible; fewer when there are fewer entries.
std::vector<WindowPlanner::Batch> WindowPlanner::cut_into(const std::vector<Entry>& entries,
                                                          size_t slots) const {
  const GreedySegments::Run all{0, entries.size()};
  double level = 0;
  {  // counted, then let go before the batches are made: an epoch's end can be millions
    const GreedySegments greedy = segments_of(entries);
    level = least_cut_level(entries, greedy, all, slots);
  }
  return batches_of(entries, cut_spans_at(entries, all, level, slots, nullptr));
}

// The cheapest level at which the run cuts into no more than `slots` batches, bisected.
double WindowPlanner::least_cut_level(const std::vector<Entry>& entries,
                                      const GreedySegments& greedy, GreedySegments::Run run,
                                      size_t slots) const {
  double total = 0, largest = 0;
  for (size_t k = run.from; k < run.to; ++k) {
    const double cost = options_.cost.per_sample(entries[k].length);
    total += cost;
    largest = std::max(largest, cost);
  }
  return least_cut_level(greedy, run, slots, total, largest);
}

// The same, given the run's summed cost and its dearest sample's.
double WindowPlanner::least_cut_level(const GreedySegments& greedy, GreedySegments::Run run,
                                      size_t slots, double total, double largest) const {
  const double lo = std::max(largest, total / static_cast<double>(slots)), hi = limits_.budget;
  return lo < hi ? greedy.least_level(run, slots, lo, hi, 60, 1e-9) : hi;
}

// The batches `spans` of `entries` hold.
std::vector<WindowPlanner::Batch> WindowPlanner::batches_of(const std::vector<Entry>& entries,
                                                            const std::vector<Span>& spans) {
  std::vector<Batch> batches;
  batches.reserve(spans.size());
  for (const Span& span : spans) {
    const auto first = entries.begin() + static_cast<std::ptrdiff_t>(span.begin);
    batches.push_back(
        {{first, first + static_cast<std::ptrdiff_t>(span.count)}, span.longest, span.cost});
  }
  return batches;
}

// The run cut greedily at `level`, then its dearest batches split until it fills `slots`
// (where they can be), dearest first: as spans of `entries`, not a sample copied (a
// caller makes batches of them with batches_of), which is all a caller that only
// weighs a cut needs (split_off_light_tail weighs one per batch of a step, and at a
// thousand ranks an epoch's end of a million samples is a step or two). `greedy`, the
// segments of all of `entries`, finds each segment in a few steps where given.
std::vector<WindowPlanner::Span> WindowPlanner::cut_spans_at(const std::vector<Entry>& entries,
                                                             GreedySegments::Run run, double level,
                                                             size_t slots,
                                                             const GreedySegments* greedy) const {
  std::vector<Span> spans;
  for (size_t next = run.from; next < run.to;) {
    Span span{.begin = next};
    const size_t end = greedy ? greedy->end(next, run, level, span.longest)
                              : segment_end(entries, next, run.to, level, span.longest);
    span.count = end - next;
    span.cost = options_.cost.batch(span.count, span.longest);
    spans.push_back(span);
    next = end;
  }
  split_dearest(entries, spans, slots);
  std::stable_sort(spans.begin(), spans.end(),
                   [](const Span& a, const Span& b) { return a.cost > b.cost; });
  return spans;
}

// Uses every slot: halves the dearest span of two or more samples (the first of equal
// ones) until there are `slots`, or none can be halved; the second half goes last. A
// heap of the spans that can be, so a cut into a thousand slots is not a thousand scans
// of a thousand spans.
void WindowPlanner::split_dearest(const std::vector<Entry>& entries, std::vector<Span>& spans,
                                  size_t slots) const {
  // The heap's top is the dearest, and of equal ones the first.
  const auto after = [&spans](size_t a, size_t b) {
    return spans[a].cost != spans[b].cost ? spans[a].cost < spans[b].cost : a > b;
  };
  std::vector<size_t> heap;
  for (size_t k = 0; k < spans.size(); ++k)
    if (spans[k].count >= 2) heap.push_back(k);
  std::make_heap(heap.begin(), heap.end(), after);
  auto recost = [&](Span& span) {
    span.longest = 0;
    for (size_t k = span.begin; k < span.begin + span.count; ++k)
      span.longest = std::max(span.longest, entries[k].length);
    span.cost = options_.cost.batch(span.count, span.longest);
  };
  auto push = [&](size_t k) {
    if (spans[k].count < 2) return;
    heap.push_back(k);
    std::push_heap(heap.begin(), heap.end(), after);
  };
  while (spans.size() < slots && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const size_t worst = heap.back();
    heap.pop_back();
    Span& first = spans[worst];
    Span second{.begin = first.begin + first.count / 2, .count = first.count - first.count / 2};
    first.count /= 2;
    recost(first);
    recost(second);
    spans.push_back(second);
    push(worst);
    push(spans.size() - 1);
  }
}

// Longest (noisy key) first; ties by a per-epoch hash, then id.
bool WindowPlanner::by_key(const Entry& a, const Entry& b) {
  return a.key != b.key ? a.key > b.key : a.tie != b.tie ? a.tie < b.tie : a.id < b.id;
}

// Key order is total (ids differ), so any sort gives the same order, and one already
// in it is left: a window's end is sorted again on each way of finishing it.
void WindowPlanner::sort_by_key(std::vector<Entry>& entries) {
  const auto before = [](const Entry& a, const Entry& b) { return by_key(a, b); };
  if (!std::is_sorted(entries.begin(), entries.end(), before))
    std::stable_sort(entries.begin(), entries.end(), before);
}

// Each batch of the window keeps its longest sample and its count; every other sample
// is dealt at random to a place in a batch whose longest holds it (deal_to_places), so
// batch costs, padding and step balance stay as planned and only batch mates change.
void WindowPlanner::mix_window(std::vector<Planned>& planned, uint64_t window_index) const {
  std::vector<Batch*> batches;
  std::vector<uint64_t> longest, places, pool_lengths;
  std::vector<Entry> pool;
  size_t dealt_samples = 0;  // reserved at once: a window's pool is megabytes
  for (const Planned& step : planned) {
    for (const Batch& b : step.batches)
      dealt_samples += b.entries.size() < 2 ? 0 : b.entries.size() - 1;
  }
  pool.reserve(dealt_samples);
  for (Planned& step : planned) {
    for (Batch& b : step.batches) {
      if (b.entries.size() < 2) continue;
      std::iter_swap(b.entries.begin(), std::max_element(b.entries.begin(), b.entries.end(),
                                                         [](const Entry& x, const Entry& y) {
                                                           return x.length < y.length;
                                                         }));
      batches.push_back(&b);
      longest.push_back(b.entries.front().length);
      places.push_back(b.entries.size() - 1);
      pool.insert(pool.end(), b.entries.begin() + 1, b.entries.end());
      b.entries.resize(1);
    }
  }
  pool_lengths.reserve(pool.size());
  for (const Entry& e : pool) pool_lengths.push_back(e.length);
  CounterRng rng(seed_, RngStream::kBatchDeal, epoch_, window_index);
  // Each sample's and each kept sample's batch last epoch, to steer away from.
  std::vector<uint32_t> pool_group, batch_group;
  if (previous_ != nullptr) {
    pool_group.reserve(pool.size());
    for (const Entry& e : pool) pool_group.push_back(previous_->batch_of(e.id));
    for (const Batch* b : batches) batch_group.push_back(previous_->batch_of(b->entries[0].id));
  }
  const DealSteer steer{.pool_group = pool_group, .batch_group = batch_group};
  const std::vector<uint32_t> dealt =
      deal_to_places(pool_lengths, longest, places, rng, previous_ ? &steer : nullptr);
  for (size_t k = 0; k < pool.size(); ++k) batches[dealt[k]]->entries.push_back(pool[k]);
  for (Planned& step : planned) count_samples(step);
}

double WindowPlanner::emit_in_chosen_order(std::vector<Planned>& planned, uint64_t window_index,
                                           double previous_mean,
                                           std::vector<CostedStep>& steps) const {
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
    CostedStep step{.ranks = StepBatches(world_size_), .costs = {}};
    for (uint32_t r = 0; r < world_size_; ++r) {
      for (const Entry& e : planned[k].batches[r].entries) step.ranks[r].samples.push_back(e.id);
      step.costs.push_back(planned[k].batches[r].cost);
    }
    steps.push_back(std::move(step));
  }
  return best.empty() ? previous_mean : planned[best.back()].mean_length;
}

double WindowPlanner::plan(std::vector<PlanItem> items, bool last, uint64_t window_index,
                           double previous_mean, std::vector<CostedStep>& steps,
                           std::vector<PlanItem>& carry) const {
  const size_t carried_before = carry.size();
  std::vector<Planned> planned = plan_steps(std::move(items), last, carry);
  if (const double padding = padding_share(planned);
      options_.padding_guard > 0 && options_.noise > 0 && padding > options_.padding_guard) {
    plan_quietly_if_less_padded(planned, padding, last, carry, carried_before, 1.0);
    if (const double still = padding_share(planned); still > kPaddingTarget) {
      plan_quietly_if_less_padded(planned, still, last, carry, carried_before, kQuieterNoiseCap);
    }
  }
  shed_and_swap(planned);
  if (last && options_.lift_light_batches) lift_light_batches(planned);
  absorb_negligible(planned);
  if (options_.mix_batches) mix_window(planned, window_index);
  return emit_in_chosen_order(planned, window_index, previous_mean, steps);
}

// Steps 1-5 for one window: its whole steps, in no particular order, with what is
// left appended to `carry`.
std::vector<WindowPlanner::Planned> WindowPlanner::plan_steps(std::vector<PlanItem> items,
                                                              bool last,
                                                              std::vector<PlanItem>& carry,
                                                              bool regroup) const {
  std::vector<Entry> coarse, fillers;  // both longest first
  {
    const std::vector<Entry> sorted = noisy_sort(items);
    items.clear();
    items.shrink_to_fit();
    const size_t filler_count =
        static_cast<size_t>(std::count_if(sorted.begin(), sorted.end(), [&](const Entry& e) {
          return per_batch(e.length) >= kFillerPerBatch;
        }));
    fillers.reserve(filler_count);
    coarse.reserve(sorted.size() - filler_count);
    for (const Entry& e : sorted)
      (per_batch(e.length) >= kFillerPerBatch ? fillers : coarse).push_back(e);
  }

  Work work;
  plan_coarse(coarse, fillers, regroup, work);
  plan_fillers(std::move(fillers), work);
  // Carry what is left into the next window, unless this is the last one or the carry
  // would outgrow a window (then it is cut here, as well as it can be).
  std::optional<CappedFork> fork = plan_capped(work, true);
  if (!last && work.leftover.size() + work.capped.size() <=
                   std::max<uint64_t>(options_.window, world_size_)) {
    for (const Entry& e : work.leftover) carry.push_back({e.id, e.length});
    for (const Entry& e : work.capped) carry.push_back({e.id, e.length});
    for (Planned& p : work.apart) work.planned.push_back(std::move(p));
    level_by_swaps(work.planned);
    move_to_level(work.planned);
    return std::move(work.planned);
  }
  if (!fork) {
    work.planned = finish_level(std::move(work));
  } else {
    // The capped steps' levels change which of them are left over, and a window's end
    // is sensitive to what it is given: the end is made from both and the more level
    // kept (on a synthetic corpus at 16 ranks, 2 of 10 seeds ended at 1.11-1.12 with
    // the levels chosen, 1.06-1.08 without them).
    Work plain{.planned = work.planned,
               .apart = {work.apart.begin(), work.apart.begin() + static_cast<long>(fork->apart)},
               .leftover = work.leftover,
               .capped = std::move(fork->capped)};
    plan_capped(plain, false);
    std::vector<Planned> chosen = finish_level(std::move(work));
    std::vector<Planned> plain_end = finish_level(std::move(plain));
    work.planned = more_level(level_of(plain_end), level_of(chosen)) ? std::move(plain_end)
                                                                     : std::move(chosen);
  }
  move_to_level(work.planned);
  if (fill_idle_ranks(work.planned)) level_by_swaps(work.planned);
  if (last && work.fillers_short && !regroup) {
    if (const StepsLevel level = level_of(work.planned); level.worst > kLevelEnough)
      keep_more_level_regrouped(work.planned, level);
  }
  if (last && !regroup && options_.level_tolerance > kTighterLevelTolerance) {
    if (const StepsLevel level = level_of(work.planned); level.worst > kLevelEnough)
      keep_more_level_tighter(work.planned, level);
  }
  return std::move(work.planned);
}

// The epoch's last window, when its worst step is above kLevelEnough, planned again
// with coarse groups of a tighter level tolerance (kTighterLevelTolerance), the more
// level plan kept (if it pads no more than the padding guard, or than the first).
// On source files (linear, 64 ranks, 8,192 tokens, capped at 64) the end planned with
// groups within 8% of their dearest batch left cheap steps (at 0.26-0.46 of the
// budget) of a few mid-length files a batch beside batches of 64 short ones at the
// cap, at max/mean 1.06-1.13; within 5%, the short files make one step of their own
// (at 0.06 of the budget, 1.05-1.08) and no step lies between: p99 1.106 -> 1.053,
// useful share 98.37% -> 98.62%. For every window (the level tolerance 0.05 given, on
// the sweeps of docs/plan_history.md) it cost 5 configurations a target and gained 2:
// so only an end out of level is planned again, and the second plan kept only where
// it is more level.
void WindowPlanner::keep_more_level_tighter(std::vector<Planned>& planned,
                                            const StepsLevel& level) const {
  BucketingOptions tighter = options_;
  tighter.level_tolerance = kTighterLevelTolerance;
  WindowPlanner tighter_planner(tighter, world_size_, seed_, epoch_);
  tighter_planner.set_lump_spread(spread_);
  std::vector<PlanItem> no_carry;  // the last window carries nothing
  keep_if_more_level(planned, level, tighter_planner.plan_steps(items_of(planned), true, no_carry));
}

// `items` followed by the samples of `planned`, in no particular order (the noisy sort
// orders them).
std::vector<PlanItem> WindowPlanner::items_of(const std::vector<Planned>& planned,
                                              std::vector<PlanItem> items) {
  for (const Planned& step : planned)
    for (const Batch& b : step.batches)
      for (const Entry& e : b.entries) items.push_back({e.id, e.length});
  return items;
}

// `other` (a second plan of the same samples) in place of `planned` (of level `level`)
// where it is more level and pads no more than the padding guard, or than `planned`:
// more pieces cut to levels can pad more.
void WindowPlanner::keep_if_more_level(std::vector<Planned>& planned, const StepsLevel& level,
                                       std::vector<Planned> other) const {
  const double most_padding = std::max(padding_share(planned), options_.padding_guard);
  if (padding_share(other) <= most_padding && more_level(level_of(other), level))
    planned = std::move(other);
}

// The epoch's last window, when its fillers were short of its coarse groups and its
// worst step is above kLevelEnough, is planned again with the groups chosen for the
// fillers (regroup_for_fillers), and the more level plan kept (if it pads no more than
// the padding guard, or than the first). Both ways: where the final cut levels the
// incomplete groups among themselves and the fillers left, regrouping starves it
// (paragraphs, quadratic, 64 ranks, 32,768 tokens: the worst step 1.085 -> 1.349 when
// always regrouped). Only the last window: every gain measured was there, and a second
// plan costs what the first did (at 4,096 ranks, where windows are finished for
// outgrowing their carry, planning every finished window twice took 2.4 times as long;
// the last one alone, 2.2 times: 1.15 million paragraphs, whose last window's plan
// takes minutes there).
void WindowPlanner::keep_more_level_regrouped(std::vector<Planned>& planned,
                                              const StepsLevel& level) const {
  std::vector<PlanItem> no_carry;  // the last window carries nothing
  keep_if_more_level(planned, level, plan_steps(items_of(planned), true, no_carry, true));
}

// Whether the fillers are short of completing every group formed within the level
// tolerance; if so and `regroup`, the groups are chosen again (plan_coarse_runs): runs
// of the cost order whose pieces the fillers can afford, least out of level in total.
// The groups left incomplete are otherwise mid-level ones of mixed cost (source files,
// quadratic, 64 ranks, 8,192 tokens, capped at 64), which the final cut mixes into
// steps out of level.
bool WindowPlanner::regroup_for_fillers(const std::vector<Batch>& batches,
                                        const std::vector<Entry>& fillers, double reach,
                                        bool regroup, std::vector<CoarseGroup>& groups) const {
  const size_t W = world_size_;
  if (groups.empty()) return false;
  double need = 0, mass = 0;
  for (const CoarseGroup& g : groups)
    if (g.level <= reach) need += static_cast<double>(W - g.batches.size()) * g.level;
  const double lowest = groups.back().level * (1 - options_.level_tolerance);
  for (const Entry& e : fillers)
    if (!bounded() || full_batch_cost(e.length) >= lowest)
      mass += options_.cost.per_sample(e.length);
  // Half a step at the budget is kept back for the window's end.
  mass -= 0.5 * static_cast<double>(W) * limits_.budget;
  if (need <= mass) return false;
  if (!regroup) return true;
  std::vector<double> costs;
  for (const Batch& b : batches) costs.push_back(b.cost);
  const std::optional<CoarseRuns> runs = plan_coarse_runs(costs, std::max(0.0, mass), W, reach);
  if (!runs) return true;
  groups.clear();
  size_t i = 0;
  for (size_t run : runs->batches_per_step) {
    groups.push_back(
        {{batches.begin() + static_cast<long>(i), batches.begin() + static_cast<long>(i + run)},
         batches[i].cost});
    i += run;
  }
  return true;
}

// Coarse batches, grouped by cost level: a group takes up to W batches within the
// level tolerance of its dearest, and is completed with fillers cut to its level. The
// cheapest levels are completed first: when fillers run short, what is left over is
// then the most expensive samples, which are alike (often documents truncated to the
// budget) and balance among themselves in the final cut; mixed mid-level lumps would
// not. Groups that cannot be completed go to the leftover.
void WindowPlanner::plan_coarse(const std::vector<Entry>& coarse, std::vector<Entry>& fillers,
                                bool regroup, Work& work) const {
  const size_t W = world_size_;
  std::vector<Batch> batches = pack(coarse);
  std::stable_sort(batches.begin(), batches.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  std::vector<CoarseGroup> groups;
  for (size_t i = 0; i < batches.size();) {
    const double level = batches[i].cost;
    size_t j = i;
    while (j < batches.size() && j - i < W &&
           batches[j].cost >= level * (1 - options_.level_tolerance))
      ++j;
    groups.push_back(
        {{batches.begin() + static_cast<long>(i), batches.begin() + static_cast<long>(j)}, level});
    i = j;
  }
  // With a sample cap or token bound, the most a batch of fillers can cost (before any
  // is taken): a group above it cannot be completed, and cut_to_level would scan every
  // filler to find that out, once per group.
  double filler_reach = 0;
  for (const Entry& e : fillers) filler_reach = std::max(filler_reach, full_batch_cost(e.length));
  work.fillers_short = regroup_for_fillers(
      batches, fillers, bounded() ? filler_reach : limits_.budget, regroup, groups);
  spread_sparse_lumps(groups, filler_reach);
  // Levels only rise in this loop, so fillers found unreachable stay so: each search
  // starts where the last one found nothing (`unreachable`, meaningful when bounded).
  // They are set aside from the back of `fillers` as they are found, in reverse order,
  // and put back at the end: each cut then erases at the back. (Erasing before them
  // moved every one of them once per cut: a tenth of the planning time of a corpus of
  // 1.8 million sentences under a sample cap, most of them too short to reach a level.)
  size_t unreachable = fillers.size();
  std::vector<Entry> set_aside;
  for (size_t g = groups.size(); g-- > 0;) {
    std::vector<Batch>& group = groups[g].batches;
    const bool reachable =
        !bounded() || filler_reach >= groups[g].level * (1 - options_.level_tolerance);
    while (reachable && group.size() < W) {
      Batch filler = cut_to_level(fillers, groups[g].level, false, &unreachable);
      for (; fillers.size() > unreachable; fillers.pop_back()) set_aside.push_back(fillers.back());
      if (filler.entries.empty()) break;
      group.push_back(std::move(filler));
    }
    if (group.size() == W) {
      work.planned.push_back(make_step(std::move(group)));
    } else {
      work.give_back(group);
    }
  }
  fillers.insert(fillers.end(), set_aside.rbegin(), set_aside.rend());
}

// The remaining fillers. Those that can fill the budget are packed at it and the
// batches, sorted by cost, form steps W at a time. Those that a sample cap or token
// bound keeps from filling it ("capped") would give batches whose costs jump with
// integer lengths; they are left for plan_capped.
void WindowPlanner::plan_fillers(std::vector<Entry> fillers, Work& work) const {
  const size_t W = world_size_;
  if (bounded()) {
    std::vector<Entry> full;
    for (const Entry& e : fillers)
      (reaches_at_cap(e, limits_.budget) ? full : work.capped).push_back(e);
    fillers = std::move(full);
  }
  std::vector<Batch> batches = pack(fillers);
  std::stable_sort(batches.begin(), batches.end(),
                   [](const Batch& a, const Batch& b) { return a.cost > b.cost; });
  const size_t whole = batches.size() / W * W;
  for (size_t k = 0; k < whole; k += W) {
    work.planned.push_back(make_step(
        {batches.begin() + static_cast<long>(k), batches.begin() + static_cast<long>(k + W)}));
  }
  work.give_back({batches.begin() + static_cast<long>(whole), batches.end()});
}

}  // namespace evenfeed
