#include "loader/manifest.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/checksum.h"
#include "core/error.h"

namespace evenfeed {
namespace {

using nlohmann::json;

const json& field(const json& object, const char* name, const std::string& where) {
  auto it = object.find(name);
  EVENFEED_CHECK(it != object.end(),
                 "{}: missing field '{}'; the manifest is damaged, re-run `evenfeed convert`",
                 where, name);
  return *it;
}

uint64_t uint_field(const json& object, const char* name, const std::string& where) {
  const json& value = field(object, name, where);
  EVENFEED_CHECK(
      value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0),
      "{}: field '{}' must be a non-negative integer", where, name);
  return value.get<uint64_t>();
}

std::string string_field(const json& object, const char* name, const std::string& where) {
  const json& value = field(object, name, where);
  EVENFEED_CHECK(value.is_string(), "{}: field '{}' must be a string", where, name);
  return value.get<std::string>();
}

// A file name inside the dataset directory, never a path that escapes it.
std::string file_name_field(const json& object, const std::string& where) {
  std::string name = string_field(object, "file", where);
  EVENFEED_CHECK(
      !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
      "{}: '{}' is not a plain file name", where, excerpt(name));
  return name;
}

void check_shards_tile_ids(const Manifest& m, const std::string& where) {
  uint64_t next = 0;
  for (size_t i = 0; i < m.shards.size(); ++i) {
    const ShardEntry& s = m.shards[i];
    EVENFEED_CHECK(s.first_id == next,
                   "{}: shard {} ({}) starts at id {} but the previous shard ended at {}", where, i,
                   s.file, s.first_id, next);
    EVENFEED_CHECK(s.count <= UINT64_MAX - next, "{}: shard {} count overflows", where, i);
    next += s.count;
  }
  EVENFEED_CHECK(next == m.num_samples, "{}: shards hold {} samples but num_samples is {}", where,
                 next, m.num_samples);
}

}  // namespace

const char* dataset_kind_name(DatasetKind kind) {
  return kind == DatasetKind::kImage ? "image" : "tokens";
}

const char* token_dtype_name(TokenDtype dtype) {
  switch (dtype) {
    case TokenDtype::kUint16:
      return "uint16";
    case TokenDtype::kUint32:
      return "uint32";
    case TokenDtype::kNone:
      break;
  }
  return "none";
}

size_t token_dtype_bytes(TokenDtype dtype) {
  return dtype == TokenDtype::kUint16 ? 2 : dtype == TokenDtype::kUint32 ? 4 : 0;
}

std::string Manifest::to_json() const {
  json j;
  j["format"] = "evenfeed-dataset";
  j["format_version"] = kFormatVersion;
  j["kind"] = dataset_kind_name(kind);
  j["num_samples"] = num_samples;
  j["total_bytes"] = total_bytes;
  j["classes"] = classes;
  if (kind == DatasetKind::kTokens) {
    j["token_dtype"] = token_dtype_name(token_dtype);
    j["vocab_size"] = vocab_size;
  }
  j["index"] = {
      {"file", index.file}, {"bytes", index.bytes}, {"checksum", checksum_hex(index.checksum)}};
  j["shards"] = json::array();
  for (const ShardEntry& s : shards) {
    j["shards"].push_back({{"file", s.file},
                           {"first_id", s.first_id},
                           {"count", s.count},
                           {"bytes", s.bytes},
                           {"payload_bytes", s.payload_bytes},
                           {"checksum", checksum_hex(s.checksum)}});
  }
  j["source"] = {{"path", source_path}, {"format", source_format}};
  j["created_by"] = created_by;
  return j.dump(2) + "\n";
}

Manifest Manifest::from_json(const std::string& text, const std::string& where) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  EVENFEED_CHECK(!j.is_discarded() && j.is_object(),
                 "{}: not a JSON object; the manifest is damaged, re-run `evenfeed convert`",
                 where);
  EVENFEED_CHECK(string_field(j, "format", where) == "evenfeed-dataset",
                 "{}: not an evenfeed dataset manifest", where);
  uint64_t version = uint_field(j, "format_version", where);
  EVENFEED_CHECK(version == kFormatVersion,
                 "{}: format_version {} is not supported by this build (reads {}); use a matching "
                 "evenfeed or re-run convert",
                 where, version, kFormatVersion);
  Manifest m;
  std::string kind = string_field(j, "kind", where);
  EVENFEED_CHECK(kind == "image" || kind == "tokens", "{}: unknown kind '{}'", where,
                 excerpt(kind));
  m.kind = kind == "image" ? DatasetKind::kImage : DatasetKind::kTokens;
  m.num_samples = uint_field(j, "num_samples", where);
  m.total_bytes = uint_field(j, "total_bytes", where);
  if (auto it = j.find("classes"); it != j.end() && it->is_array()) {
    for (const json& c : *it) {
      EVENFEED_CHECK(c.is_string(), "{}: class names must be strings", where);
      m.classes.push_back(c.get<std::string>());
    }
  }
  if (m.kind == DatasetKind::kTokens) {
    std::string dtype = string_field(j, "token_dtype", where);
    EVENFEED_CHECK(dtype == "uint16" || dtype == "uint32", "{}: unknown token_dtype '{}'", where,
                   excerpt(dtype));
    m.token_dtype = dtype == "uint16" ? TokenDtype::kUint16 : TokenDtype::kUint32;
    m.vocab_size = uint_field(j, "vocab_size", where);
  }
  const json& index = field(j, "index", where);
  m.index = {file_name_field(index, where), uint_field(index, "bytes", where),
             parse_checksum_hex(string_field(index, "checksum", where), where)};
  const json& shards = field(j, "shards", where);
  EVENFEED_CHECK(shards.is_array(), "{}: 'shards' must be an array", where);
  for (const json& s : shards) {
    m.shards.push_back({file_name_field(s, where), uint_field(s, "first_id", where),
                        uint_field(s, "count", where), uint_field(s, "bytes", where),
                        uint_field(s, "payload_bytes", where),
                        parse_checksum_hex(string_field(s, "checksum", where), where)});
  }
  if (auto it = j.find("source"); it != j.end() && it->is_object()) {
    m.source_path = it->value("path", "");
    m.source_format = it->value("format", "");
  }
  m.created_by = j.value("created_by", "");
  check_shards_tile_ids(m, where);
  return m;
}

Manifest Manifest::load(const std::filesystem::path& dataset_dir) {
  std::filesystem::path path = dataset_dir / kFileName;
  std::ifstream in(path);
  if (!in) {
    fail("{}: cannot open the manifest; is {} an evenfeed dataset (made by `evenfeed convert`)?",
         path.string(), dataset_dir.string());
  }
  std::stringstream text;
  text << in.rdbuf();
  return from_json(text.str(), path.string());
}

}  // namespace evenfeed
