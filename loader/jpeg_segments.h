// Walking a JPEG's marker segments (ITU T.81 B.1.1) without decoding it: which tables
// the header defines and which the frame and its first scan use. jpeg_probe uses it to
// refuse a JPEG that leans on tables it does not define, jpeg_default_tables to write
// the standard Huffman tables into a Motion-JPEG frame that leaves them out.
#pragma once

#include <cstddef>
#include <span>

namespace evenfeed {

// SOF0-SOF15, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
inline bool is_jpeg_frame_marker(unsigned char marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

// Calls visit(marker, begin, end) for each marker segment after SOI, [begin, end) being
// the segment's bytes after its length, until visit returns false. Bounded by the
// buffer: stops at a byte that is not a marker or a segment that runs past the end.
template <typename Visit>
void walk_jpeg_segments(std::span<const std::byte> bytes, Visit visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  for (size_t i = 2; i + 4 <= n;) {
    if (p[i] != 0xFF) return;
    const unsigned char marker = p[i + 1];
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    const size_t length = (size_t{p[i + 2]} << 8) | p[i + 3];
    const size_t end = i + 2 + length;
    if (length < 2 || end > n || !visit(marker, i + 4, end)) return;
    i = end;
  }
}

// The tables a JPEG's header defines before its first scan, and the ones its frame and
// first scan use.
struct JpegTableUse {
  bool quant_defined[4] = {}, quant_used[4] = {};
  bool huff_defined[2][4] = {}, huff_used[2][4] = {};  // [DC, AC][table]
  bool arithmetic = false, progressive = false;
  size_t first_scan = 0;  // offset of the first SOS marker (its 0xFF)
};

// Reads the DQT, DHT, SOFn and first SOS segments into `use`; false when the header
// cannot be parsed or the frame is not a DCT frame (lossless and hierarchical frames
// are left to the decoder, which says whether it supports them).
bool read_jpeg_table_use(std::span<const std::byte> bytes, JpegTableUse& use);

// The Huffman tables the first scan uses that the header leaves undefined, one bit per
// table: bit 4 x class + id (class 0 DC, 1 AC). None for an arithmetic-coded frame, and
// no AC table for a progressive one, whose first scan codes DC only.
unsigned missing_huffman_tables(const JpegTableUse& use);

}  // namespace evenfeed
