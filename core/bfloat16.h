// bfloat16 on the host: the top 16 bits of a float32, rounded to nearest even. The
// CPU references and the MPI all-reduce of bfloat16 buffers use these; the GPU kernels
// use CUDA's __nv_bfloat16, which rounds the same way.
#pragma once

#include <bit>
#include <cstdint>

namespace evenfeed {

inline uint16_t float_to_bfloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // NaN stays a (quiet) NaN
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

inline float bfloat16_to_float(uint16_t value) {
  return std::bit_cast<float>(static_cast<uint32_t>(value) << 16);
}

}  // namespace evenfeed
