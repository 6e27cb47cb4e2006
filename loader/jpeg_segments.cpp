#include "loader/jpeg_segments.h"

namespace evenfeed {
namespace {

// DQT: (precision << 4 | id), 64 or 128 bytes, repeated.
void read_quant_tables(const unsigned char* p, size_t begin, size_t end, JpegTableUse& use) {
  for (size_t k = begin; k < end;) {
    use.quant_defined[p[k] & 3] = true;
    k += 1 + ((p[k] >> 4) ? 128 : 64);
  }
}

// DHT: (class << 4 | id), 16 counts, values, repeated.
void read_huffman_tables(const unsigned char* p, size_t begin, size_t end, JpegTableUse& use) {
  for (size_t k = begin; k + 17 <= end;) {
    size_t values = 0;
    for (size_t c = 1; c <= 16; ++c) values += p[k + c];
    use.huff_defined[(p[k] >> 4) & 1][p[k] & 3] = true;
    k += 17 + values;
  }
}

// SOFn: P, Y, X, Nf, then (C, H/V, Tq) each. False for frames other than DCT ones with
// Huffman or arithmetic coding.
bool read_frame(unsigned char marker, const unsigned char* p, size_t begin, size_t end,
                JpegTableUse& use) {
  const bool dct =
      marker == 0xC0 || marker == 0xC1 || marker == 0xC2 || marker == 0xC9 || marker == 0xCA;
  if (!dct || end < begin + 6) return false;
  use.arithmetic = marker >= 0xC9;
  use.progressive = marker == 0xC2 || marker == 0xCA;
  for (size_t c = 0; c < p[begin + 5] && begin + 6 + 3 * c + 2 < end; ++c)
    use.quant_used[p[begin + 6 + 3 * c + 2] & 3] = true;
  return true;
}

// SOS: Ns, then (Cs, Td << 4 | Ta) each.
void read_scan(const unsigned char* p, size_t begin, size_t end, JpegTableUse& use) {
  for (size_t c = 0; c < p[begin] && begin + 1 + 2 * c + 1 < end; ++c) {
    const unsigned char tables = p[begin + 1 + 2 * c + 1];
    use.huff_used[0][(tables >> 4) & 3] = true;
    use.huff_used[1][tables & 3] = true;
  }
}

}  // namespace

unsigned missing_huffman_tables(const JpegTableUse& use) {
  unsigned missing = 0;
  for (int kind = 0; kind < 2 && !use.arithmetic; ++kind) {
    for (int t = 0; t < 4; ++t) {
      if (use.huff_used[kind][t] && !use.huff_defined[kind][t] && !(kind == 1 && use.progressive))
        missing |= 1u << (4 * kind + t);
    }
  }
  return missing;
}

bool read_jpeg_table_use(std::span<const std::byte> bytes, JpegTableUse& use) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  bool read = false;  // set on reaching the first scan
  walk_jpeg_segments(bytes, [&](unsigned char marker, size_t begin, size_t end) {
    if (marker == 0xDB) {
      read_quant_tables(p, begin, end, use);
    } else if (marker == 0xC4) {
      read_huffman_tables(p, begin, end, use);
    } else if (is_jpeg_frame_marker(marker)) {
      return read_frame(marker, p, begin, end, use);
    } else if (marker == 0xDA) {
      if (end <= begin) return false;
      read_scan(p, begin, end, use);
      use.first_scan = begin - 4;
      read = true;
      return false;
    }
    return true;
  });
  return read;
}

}  // namespace evenfeed
