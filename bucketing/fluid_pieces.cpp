#include "bucketing/fluid_pieces.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evenfeed {
namespace {

// Samples of one length, as a range of the length order; those before `next` are taken.
struct LengthGroup {
  uint64_t length = 0;
  size_t next = 0, end = 0;
  size_t left() const { return end - next; }
};

// What a piece would be: `count` samples, the first from group `group`, then the next
// longest.
struct PieceChoice {
  size_t group = 0;
  uint64_t count = 0;
  double cost = 0;
};

std::vector<LengthGroup> group_by_length(std::span<const uint64_t> lengths,
                                         const std::vector<size_t>& order) {
  std::vector<LengthGroup> groups;
  for (size_t k = 0; k < order.size(); ++k) {
    if (groups.empty() || groups.back().length != lengths[order[k]])
      groups.push_back({lengths[order[k]], k, k});
    groups.back().end = k + 1;
  }
  return groups;
}

// The piece of the longest samples that reaches request.target (near enough) within its
// ceiling, with as few of them as reach it (or, how.to_target, as many as come nearest
// the target under the ceiling); else the dearest under the ceiling; else the cheapest
// sample left (count 0 when none is left).
PieceChoice choose_piece(const std::vector<LengthGroup>& groups, const PieceRequest& request,
                         const PieceCut& how, const CostModel& cost,
                         const std::function<uint64_t(uint64_t)>& most_per_batch) {
  const double target = request.target * how.near_enough;
  PieceChoice reach{0, 0, 0}, under{0, 0, 0}, cheapest{0, 0, 0};
  uint64_t at_or_below = 0;  // samples left no longer than the group's length
  for (size_t g = groups.size(); g-- > 0;) {
    if (groups[g].left() == 0) continue;
    at_or_below += groups[g].left();
    const double each = cost.per_sample(groups[g].length);
    if (cheapest.count == 0) cheapest = {g, 1, each};
    if (each > request.ceiling) continue;
    const uint64_t most = std::min({most_per_batch(groups[g].length), at_or_below,
                                    static_cast<uint64_t>(std::floor(request.ceiling / each))});
    if (most == 0) continue;
    const uint64_t wanted = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(target / each)));
    if (wanted <= most) {
      const auto full = static_cast<uint64_t>(std::ceil(request.target / each));
      // At least `wanted`: a target of 0 still takes one sample.
      const uint64_t count = how.to_target ? std::min(most, std::max(wanted, full)) : wanted;
      reach = {g, count, static_cast<double>(count) * each};  // the longest so far
    } else if (static_cast<double>(most) * each > under.cost) {
      under = {g, most, static_cast<double>(most) * each};
    }
  }
  if (reach.count > 0) return reach;
  return under.count > 0 ? under : cheapest;
}

}  // namespace

std::vector<std::vector<size_t>> cut_fluid_pieces(
    std::span<const uint64_t> lengths, std::span<const PieceRequest> requests, const PieceCut& how,
    const CostModel& cost, const std::function<uint64_t(uint64_t)>& most_per_batch) {
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  std::vector<LengthGroup> groups = group_by_length(lengths, order);

  // Tightest first: the least room between target and ceiling, relative to the ceiling.
  std::vector<size_t> turn(requests.size());
  std::iota(turn.begin(), turn.end(), size_t{0});
  auto room = [&](size_t r) {
    const PieceRequest& q = requests[r];
    return q.ceiling > 0 ? (q.ceiling - q.target) / q.ceiling : 0.0;
  };
  std::stable_sort(turn.begin(), turn.end(), [&](size_t a, size_t b) { return room(a) < room(b); });

  std::vector<std::vector<size_t>> pieces(requests.size());
  for (size_t r : turn) {
    const PieceChoice choice = choose_piece(groups, requests[r], how, cost, most_per_batch);
    for (size_t g = choice.group; pieces[r].size() < choice.count && g < groups.size(); ++g) {
      while (groups[g].left() > 0 && pieces[r].size() < choice.count)
        pieces[r].push_back(order[groups[g].next++]);
    }
  }
  return pieces;
}

}  // namespace evenfeed
