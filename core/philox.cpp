#include "core/philox.h"

#include <cmath>
#include <numbers>

namespace evenfeed {
namespace {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

}  // namespace

PhiloxCounter philox4x32(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c[0], hi0, lo0);
    mulhilo(kMul1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
  }
  return c;
}

CounterRng::CounterRng(uint64_t seed, RngStream stream, uint32_t epoch, uint64_t item)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      counter_{static_cast<uint32_t>(item), static_cast<uint32_t>(item >> 32), epoch,
               static_cast<uint32_t>(stream) << 24} {}

void CounterRng::refill() {
  block_ = philox4x32(counter_, key_);
  ++counter_[3];  // the low 24 bits count blocks: 64 M draws per item
  used_ = 0;
}

uint32_t CounterRng::next_u32() {
  if (used_ == 4) refill();
  return block_[used_++];
}

uint64_t CounterRng::next_u64() {
  uint64_t hi = next_u32();
  return (hi << 32) | next_u32();
}

double CounterRng::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

uint64_t CounterRng::below(uint64_t n) {
  // Lemire's nearly-divisionless method on 64-bit draws.
  __uint128_t m = static_cast<__uint128_t>(next_u64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      m = static_cast<__uint128_t>(next_u64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double CounterRng::normal() {
  double u1 = 1.0 - uniform();  // (0, 1]
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace evenfeed
