// The element types that cross between units (communicators, GPU kernels, models):
// float32 and bfloat16.
#pragma once

#include <cstddef>

namespace evenfeed {

enum class DataType { kFloat32, kBFloat16 };

inline size_t element_size(DataType type) {
  return type == DataType::kFloat32 ? 4 : 2;
}
inline const char* data_type_name(DataType type) {
  return type == DataType::kFloat32 ? "float32" : "bfloat16";
}

}  // namespace evenfeed
