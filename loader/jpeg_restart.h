// Restart-indexed JPEGs (docs/format.md, "Restart layout"). A JPEG's entropy-coded data
// is one bit stream, so reaching a block means decoding every block before it; with a
// restart marker after every MCU each MCU's segment decodes on its own. `convert`
// writes JPEGs that way (JpegTranscoder, lossless), and the loader cuts out the MCUs
// a crop needs (read_mcu_layout, cut_mcu_window), so only they are entropy-decoded.
// Huffman decoding is most of a decode's time, and a random-resized crop covers about
// half of the image on average.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loader/crop.h"

namespace evenfeed {

// Losslessly rewrites a JPEG as one baseline Huffman scan, with a restart marker after
// every MCU when asked: the quantised coefficients are copied (decoded pixels are
// identical), Huffman tables optimised, APPn and COM markers kept. Progressive and
// arithmetic-coded JPEGs become baseline. `convert` uses it for both. One per thread;
// reused from image to image.
class JpegTranscoder {
 public:
  JpegTranscoder();
  ~JpegTranscoder();
  JpegTranscoder(const JpegTranscoder&) = delete;
  JpegTranscoder& operator=(const JpegTranscoder&) = delete;

  // Returns the problem ("truncated JPEG: ...", "corrupt JPEG data: ...": every
  // coefficient is decoded, and libjpeg's warnings count as damage), or nothing with
  // `out` holding the rewritten JPEG.
  std::optional<std::string> rewrite(std::span<const std::byte> jpeg, bool restart_markers,
                                     std::vector<std::byte>& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Where each MCU's entropy-coded segment lies in a JPEG with the restart layout.
struct McuLayout {
  int width = 0, height = 0;          // image pixels
  int mcu_width = 0, mcu_height = 0;  // pixels per MCU
  int columns = 0, rows = 0;          // MCUs per row, MCU rows
  // MCUs per restart segment: 1 as `convert` writes them; any divisor of `columns`
  // (jpegtran -restart 1 writes one per MCU row) is read, and windows then start and
  // end on segment boundaries.
  int segment_columns = 1;
  size_t sof = 0;         // offset of the SOF marker
  size_t header_end = 0;  // offset of the first entropy-coded byte
  // MCU k (row-major) is bytes [begin[k], end[k]). Reused: capacity grows to the
  // largest image, then nothing is allocated.
  std::vector<uint32_t> begin, end;
};

// Fills `layout` and returns true when `jpeg` has the restart layout: one SOF0/SOF1
// frame, a restart interval that divides the MCUs per row, one scan with every
// component, one segment per interval. False for any other JPEG (including damaged
// ones, which the normal decode then reports).
bool read_mcu_layout(std::span<const std::byte> jpeg, McuLayout& layout);

// A rectangle of MCUs: columns [column0, column1), rows [row0, row1).
struct McuWindow {
  int column0 = 0, column1 = 0, row0 = 0, row1 = 0;
  bool whole(const McuLayout& layout) const {
    return column0 == 0 && row0 == 0 && column1 == layout.columns && row1 == layout.rows;
  }
};

// The MCUs covering `crop` (source pixels), plus one on each side where there is one,
// so that upsampling at the crop's edges sees its real neighbours.
McuWindow window_for_crop(const McuLayout& layout, const CropBox& crop);

// A JPEG of just `window`'s MCUs: the original headers with the frame's size set to
// the window's, its segments with restart markers renumbered from 0, then EOI. Its
// pixel (0, 0) is the source's (column0 x mcu_width, row0 x mcu_height).
void cut_mcu_window(std::span<const std::byte> jpeg, const McuLayout& layout,
                    const McuWindow& window, std::vector<std::byte>& out);

}  // namespace evenfeed
