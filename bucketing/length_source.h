// Per-sample lengths for the planner: from the dataset index (memory-mapped), from a
// plain array, or generated on the fly (benchmarks that must not hold O(n) memory).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace evenfeed {

class LengthSource {
 public:
  virtual ~LengthSource() = default;
  virtual uint64_t size() const = 0;
  virtual uint64_t length(uint64_t id) const = 0;
};

class SpanLengths : public LengthSource {
 public:
  explicit SpanLengths(std::span<const uint64_t> lengths) : lengths_(lengths) {}
  uint64_t size() const override { return lengths_.size(); }
  uint64_t length(uint64_t id) const override { return lengths_[id]; }

 private:
  std::span<const uint64_t> lengths_;
};

// Another source's lengths cut to at most `cap` (what the loader serves with
// --oversize truncate).
class TruncatedLengths : public LengthSource {
 public:
  TruncatedLengths(const LengthSource& lengths, uint64_t cap) : lengths_(lengths), cap_(cap) {}
  uint64_t size() const override { return lengths_.size(); }
  uint64_t length(uint64_t id) const override {
    const uint64_t l = lengths_.length(id);
    return l < cap_ ? l : cap_;
  }

 private:
  const LengthSource& lengths_;
  uint64_t cap_;
};

// Log-normal lengths (median `median`, log-sd `sigma`) with a heavy tail: a share
// `tail_share` of samples is 20-100x the median. A pure function of (seed, id).
class SyntheticLengths : public LengthSource {
 public:
  SyntheticLengths(uint64_t n, uint64_t seed, double median = 128, double sigma = 0.9,
                   double tail_share = 0.01, uint64_t max_length = 32768);
  uint64_t size() const override { return n_; }
  uint64_t length(uint64_t id) const override;

 private:
  uint64_t n_, seed_;
  double median_, sigma_, tail_share_;
  uint64_t max_length_;
};

}  // namespace evenfeed
