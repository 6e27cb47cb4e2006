#include "trainer/grad_buckets.h"

#include <algorithm>

#include "core/error.h"

namespace evenfeed {

GradBuckets::GradBuckets(std::span<float> grads, const BucketOptions& options, Communicator& comm)
    : grads_(grads), options_(options), comm_(comm) {
  EVENFEED_CHECK(
      options.bucket_bytes >= sizeof(float) && options.first_bucket_bytes >= sizeof(float),
      "gradient buckets must hold at least one float");
  size_t end = grads.size();
  size_t cap = options.first_bucket_bytes / sizeof(float);
  while (end > 0) {
    const size_t begin = end - std::min(end, cap);
    bounds_.emplace_back(begin, end);
    end = begin;
    cap = options.bucket_bytes / sizeof(float);
  }
}

void GradBuckets::begin(bool communicate) {
  EVENFEED_CHECK(in_flight_.empty(),
                 "a backward pass began before the last one's buckets finished");
  communicate_ = communicate;
  next_ = 0;
}

void GradBuckets::ready_from(size_t begin) {
  if (!communicate_) return;
  AllReduceOptions options;
  options.timeout = options_.timeout;
  while (next_ < bounds_.size() && bounds_[next_].first >= begin) {
    const auto [b, e] = bounds_[next_++];
    in_flight_.push_back(comm_.all_reduce(grads_.data() + b, e - b, options));
    ++launched_total_;
  }
}

double GradBuckets::finish() {
  communicated_ = 0;
  if (!communicate_) return 0;
  ready_from(0);
  const auto start = std::chrono::steady_clock::now();
  std::vector<WorkSpan> spans;
  for (auto& work : in_flight_) {
    work->wait();
    spans.push_back(work->span());
  }
  in_flight_.clear();
  communicated_ = covered_seconds(std::move(spans));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace evenfeed
