#include "loader/dataset_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/checksum.h"
#include "core/error.h"
#include "core/quantile.h"
#include "loader/jpeg_restart.h"

namespace evenfeed {
namespace {

nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"min", p.min}, {"p50", p.p50}, {"p90", p.p90},
          {"p99", p.p99}, {"max", p.max}, {"mean", p.mean}};
}

std::string percentiles_text(const Percentiles& p) {
  return fmt::format("min {}  p50 {}  p90 {}  p99 {}  max {}  mean {:.1f}", p.min, p.p50, p.p90,
                     p.p99, p.max, p.mean);
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace

Percentiles percentiles(std::vector<uint64_t> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return quantile_of_sorted(values, q); };
  p.min = values.front();
  p.max = values.back();
  p.p50 = at(0.5);
  p.p90 = at(0.9);
  p.p99 = at(0.99);
  long double sum = 0;
  for (uint64_t v : values) sum += v;
  p.mean = static_cast<double>(sum / values.size());
  return p;
}

DatasetSummary summarize(const Dataset& dataset) {
  const Manifest& m = dataset.manifest();
  const IndexReader& index = dataset.index();
  DatasetSummary s;
  s.kind = dataset_kind_name(m.kind);
  s.num_samples = m.num_samples;
  s.num_shards = m.shards.size();
  s.total_bytes = m.total_bytes;
  s.file_bytes = m.index.bytes;
  for (const ShardEntry& e : m.shards) s.file_bytes += e.bytes;
  s.classes = m.classes;
  for (int32_t label : index.labels()) ++s.label_counts[label];
  s.length = percentiles({index.lengths().begin(), index.lengths().end()});
  if (m.kind == DatasetKind::kImage) {
    s.width = percentiles({index.widths().begin(), index.widths().end()});
    s.height = percentiles({index.heights().begin(), index.heights().end()});
  } else {
    s.token_dtype = token_dtype_name(m.token_dtype);
    s.vocab_size = m.vocab_size;
  }
  return s;
}

nlohmann::json DatasetSummary::to_json() const {
  nlohmann::json j;
  j["kind"] = kind;
  j["num_samples"] = num_samples;
  j["num_shards"] = num_shards;
  j["total_bytes"] = total_bytes;
  j["file_bytes"] = file_bytes;
  nlohmann::json labels = nlohmann::json::array();
  for (const auto& [label, count] : label_counts) {
    nlohmann::json l = {{"label", label}, {"count", count}};
    if (label >= 0 && static_cast<size_t>(label) < classes.size()) l["class"] = classes[label];
    labels.push_back(l);
  }
  j["labels"] = labels;
  j["length"] = percentiles_json(length);
  if (kind == "image") {
    j["width"] = percentiles_json(width);
    j["height"] = percentiles_json(height);
  } else {
    j["token_dtype"] = token_dtype;
    j["vocab_size"] = vocab_size;
  }
  return j;
}

std::string DatasetSummary::to_text() const {
  std::string out;
  out += fmt::format("kind        {}\n", kind);
  out += fmt::format("samples     {}\n", num_samples);
  out += fmt::format("shards      {}\n", num_shards);
  out += fmt::format("payload     {} ({} bytes); on disk {}\n", human_bytes(total_bytes),
                     total_bytes, human_bytes(file_bytes));
  if (kind == "tokens")
    out += fmt::format("tokens      {} ids, vocabulary {}\n", token_dtype, vocab_size);
  out += fmt::format("length      {}\n", percentiles_text(length));
  if (kind == "image") {
    out += fmt::format("width       {}\n", percentiles_text(width));
    out += fmt::format("height      {}\n", percentiles_text(height));
  }
  out += "labels\n";
  const uint64_t shown = 20;
  uint64_t k = 0;
  for (const auto& [label, count] : label_counts) {
    if (k++ == shown) {
      out += fmt::format("  ... and {} more labels\n", label_counts.size() - shown);
      break;
    }
    std::string name =
        label >= 0 && static_cast<size_t>(label) < classes.size() ? classes[label] : "";
    out += fmt::format("  {:>6}  {:>10}  {:5.1f}%  {}\n", label, count,
                       100.0 * static_cast<double>(count) /
                           static_cast<double>(std::max<uint64_t>(num_samples, 1)),
                       name);
  }
  return out;
}

nlohmann::json describe_sample(const Dataset& dataset, uint64_t id) {
  EVENFEED_CHECK(id < dataset.size(),
                 "--sample {} is out of range: the dataset holds {} samples (ids 0-{})", id,
                 dataset.size(), dataset.size() == 0 ? 0 : dataset.size() - 1);
  const IndexEntry entry = dataset.index().entry(id);
  const uint32_t shard = dataset.shard_of(id);
  nlohmann::json j = {{"id", id},
                      {"shard", dataset.manifest().shards[shard].file},
                      {"source", std::string(dataset.index().source_name(id))},
                      {"label", entry.label},
                      {"length", entry.length},
                      {"width", entry.width},
                      {"height", entry.height}};
  if (entry.label >= 0 && static_cast<size_t>(entry.label) < dataset.manifest().classes.size()) {
    j["class"] = dataset.manifest().classes[entry.label];
  }
  Dataset::ReadSession session(dataset);
  RecordView view;
  std::optional<std::string> problem;
  try {
    problem = dataset.try_read(session, id, /*verify_checksum=*/true, view);
  } catch (const Error& e) {
    problem = e.what();
  }
  j["ok"] = !problem.has_value();
  if (problem) {
    j["problem"] = *problem;
    return j;
  }
  j["record"] = {{"kind", record_kind_name(view.header.kind)},
                 {"payload_bytes", view.header.payload_bytes},
                 {"checksum", checksum_hex(view.header.checksum)}};
  if (view.header.kind == RecordKind::kJpeg) {
    // Whether the loader can decode just a crop's MCUs (docs/format.md).
    McuLayout layout;
    const bool restarts = read_mcu_layout(view.payload, layout);
    j["record"]["restart_layout"] = restarts;
    if (restarts) j["record"]["mcus"] = layout.columns * layout.rows;
  } else {
    const size_t width = view.header.kind == RecordKind::kTokensU16 ? 2 : 4;
    nlohmann::json first = nlohmann::json::array();
    for (uint64_t k = 0; k < std::min<uint64_t>(view.header.length, 32); ++k) {
      uint32_t t = 0;
      std::memcpy(&t, view.payload.data() + k * width, width);
      first.push_back(t);
    }
    j["first_tokens"] = first;
  }
  return j;
}

}  // namespace evenfeed
