// The results of a pure function of a list of items, for the inputs seen last.
//
// A window's end is finished several ways (WindowPlanner::finish_level), and a window
// may be planned again quieter or regrouped; many of those ways hand the final cut the
// same leftover. On 5,000 synthetic samples (quadratic, 64 ranks, 8,192 tokens) an
// epoch made 336 final cuts of 51 different leftovers, and the cuts took nine tenths
// of the planning time. A cut is a function of its leftover's samples alone, so the
// planner keeps the last few and cuts each leftover once.
//
// Bounded twice, so memory stays O(window): at most `most_results` inputs, holding at
// most `most_items` items between them (least recently used first out). Not thread
// safe: one planner, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <utility>
#include <vector>

namespace evenfeed {

template <class Item, class Result>
class RecentResults {
 public:
  RecentResults(size_t most_results, size_t most_items)
      : most_results_(most_results), most_items_(most_items) {}

  // The result kept for `input` (whose hash is `hash`), or null. A hit becomes the most
  // recently used.
  const Result* find(const std::vector<Item>& input, uint64_t hash) {
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->hash != hash || it->input != input) continue;
      kept_.splice(kept_.begin(), kept_, it);
      return &kept_.front().result;
    }
    return nullptr;
  }

  // Keeps `result` for `input`, unless the input alone is more than may be kept.
  void keep(std::vector<Item> input, uint64_t hash, Result result) {
    if (input.size() > most_items_) return;
    input.shrink_to_fit();  // an input grown by inserts may hold twice its size
    items_ += input.size();
    kept_.push_front({hash, std::move(input), std::move(result)});
    while (kept_.size() > most_results_ || items_ > most_items_) {
      items_ -= kept_.back().input.size();
      kept_.pop_back();
    }
  }

 private:
  struct Kept {
    uint64_t hash;
    std::vector<Item> input;
    Result result;
  };
  size_t most_results_, most_items_, items_ = 0;
  std::list<Kept> kept_;
};

}  // namespace evenfeed
