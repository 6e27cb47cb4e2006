#include "loader/jpeg_restart.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "loader/jpeg_probe.h"
#include "loader/libjpeg_errors.h"

namespace evenfeed {
namespace {

uint8_t byte_at(std::span<const std::byte> data, size_t at) {
  return static_cast<uint8_t>(data[at]);
}

unsigned big_endian16(std::span<const std::byte> data, size_t at) {
  return (unsigned{byte_at(data, at)} << 8) | byte_at(data, at + 1);
}

// The markers libjpeg writes itself when the colour space asks for them (JFIF APP0,
// Adobe APP14): copying the source's as well would write them twice.
bool written_by_libjpeg(const jpeg_compress_struct& dst, const jpeg_saved_marker_ptr m) {
  auto starts = [&](const char* tag, size_t n) {
    return m->data_length >= n && std::memcmp(m->data, tag, n) == 0;
  };
  return (dst.write_JFIF_header && m->marker == JPEG_APP0 && starts("JFIF", 5)) ||
         (dst.write_Adobe_marker && m->marker == JPEG_APP0 + 14 && starts("Adobe", 5));
}

// Segment ends: scans the entropy-coded data from `layout.header_end` for restart
// markers and the final EOI. False on any other marker (a second scan, DNL, damage).
bool find_segments(std::span<const std::byte> jpeg, McuLayout& layout) {
  const size_t total = static_cast<size_t>(layout.columns / layout.segment_columns) *
                       static_cast<size_t>(layout.rows);
  const auto* data = reinterpret_cast<const uint8_t*>(jpeg.data());
  const size_t size = jpeg.size();
  layout.begin.clear();
  layout.end.clear();
  size_t start = layout.header_end, at = layout.header_end;
  while (true) {
    const void* ff = at < size ? std::memchr(data + at, 0xFF, size - at) : nullptr;
    if (ff == nullptr) return false;  // no EOI: truncated
    const size_t marker = static_cast<size_t>(static_cast<const uint8_t*>(ff) - data);
    size_t next = marker + 1;
    while (next < size && data[next] == 0xFF) ++next;  // fill bytes
    if (next >= size) return false;
    const uint8_t code = data[next];
    at = next + 1;
    if (code == 0x00) continue;  // a stuffed FF data byte
    if (code == JPEG_EOI || (code >= 0xD0 && code <= 0xD7)) {
      if (layout.begin.size() == total) return false;  // more segments than MCUs
      layout.begin.push_back(static_cast<uint32_t>(start));
      layout.end.push_back(static_cast<uint32_t>(marker));
      start = at;
      if (code == JPEG_EOI) return layout.begin.size() == total;
      continue;
    }
    return false;
  }
}

}  // namespace

struct JpegTranscoder::State {
  jpeg_decompress_struct src{};
  jpeg_compress_struct dst{};
  LibjpegErrors err{};  // shared: either side's error jumps to the same place
};

JpegTranscoder::JpegTranscoder() : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.src.err = s.err.install();
  s.dst.err = &s.err.base;
  jpeg_create_decompress(&s.src);
  jpeg_create_compress(&s.dst);
  jpeg_save_markers(&s.src, JPEG_COM, 0xFFFF);
  for (int m = 0; m < 16; ++m) jpeg_save_markers(&s.src, JPEG_APP0 + m, 0xFFFF);
}

JpegTranscoder::~JpegTranscoder() {
  jpeg_destroy_compress(&state_->dst);
  jpeg_destroy_decompress(&state_->src);
}

std::optional<std::string> JpegTranscoder::rewrite(std::span<const std::byte> jpeg,
                                                   bool restart_markers,
                                                   std::vector<std::byte>& out) {
  if (auto missing = missing_jpeg_tables(jpeg)) return missing;
  State& s = *state_;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  if (setjmp(s.err.jump)) {
    jpeg_abort_compress(&s.dst);
    jpeg_abort_decompress(&s.src);
    std::free(buffer);
    return describe_jpeg_damage(s.err.message);  // as the decode check words it
  }
  jpeg_mem_src(&s.src, reinterpret_cast<const unsigned char*>(jpeg.data()),
               static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&s.src, TRUE);
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(&s.src);
  jpeg_copy_critical_parameters(&s.src, &s.dst);
  s.dst.restart_interval = restart_markers ? 1 : 0;  // a marker after every MCU, or none
  s.dst.optimize_coding = TRUE;
  jpeg_mem_dest(&s.dst, &buffer, &size);
  jpeg_write_coefficients(&s.dst, coefficients);
  for (jpeg_saved_marker_ptr m = s.src.marker_list; m != nullptr; m = m->next) {
    if (!written_by_libjpeg(s.dst, m))
      jpeg_write_marker(&s.dst, m->marker, m->data, m->data_length);
  }
  jpeg_finish_compress(&s.dst);
  jpeg_finish_decompress(&s.src);
  out.resize(size);
  std::memcpy(out.data(), buffer, size);
  std::free(buffer);
  return std::nullopt;
}

bool read_mcu_layout(std::span<const std::byte> jpeg, McuLayout& layout) {
  if (jpeg.size() < 4 || byte_at(jpeg, 0) != 0xFF || byte_at(jpeg, 1) != 0xD8) return false;  // SOI
  int components = 0, h_max = 1, v_max = 1;
  unsigned restart_interval = 0;
  bool frame = false;
  size_t at = 2;
  while (true) {
    while (at < jpeg.size() && byte_at(jpeg, at) == 0xFF && at + 1 < jpeg.size() &&
           byte_at(jpeg, at + 1) == 0xFF)
      ++at;  // fill bytes before a marker
    if (at + 4 > jpeg.size() || byte_at(jpeg, at) != 0xFF) return false;
    const uint8_t code = byte_at(jpeg, at + 1);
    const size_t length = big_endian16(jpeg, at + 2);
    if (length < 2 || at + 2 + length > jpeg.size()) return false;
    if (code == 0xC0 || code == 0xC1) {  // baseline or extended sequential, Huffman
      if (frame || length < 8 || byte_at(jpeg, at + 4) != 8) return false;
      layout.sof = at;
      layout.height = static_cast<int>(big_endian16(jpeg, at + 5));
      layout.width = static_cast<int>(big_endian16(jpeg, at + 7));
      components = byte_at(jpeg, at + 9);
      if (components < 1 || length < 8 + 3 * static_cast<size_t>(components)) return false;
      for (int c = 0; c < components; ++c) {
        const uint8_t sampling = byte_at(jpeg, at + 11 + 3 * static_cast<size_t>(c));
        h_max = std::max(h_max, sampling >> 4);
        v_max = std::max(v_max, sampling & 15);
      }
      frame = true;
    } else if (code >= 0xC2 && code <= 0xCF && code != 0xC4 && code != 0xC8 && code != 0xCC) {
      return false;  // progressive, lossless, arithmetic or hierarchical
    } else if (code == 0xDD) {
      restart_interval = big_endian16(jpeg, at + 4);
    } else if (code == 0xDA) {
      if (!frame || restart_interval != 1 || byte_at(jpeg, at + 4) != components) return false;
      layout.header_end = at + 2 + length;
      break;
    }
    at += 2 + length;
  }
  if (layout.width <= 0 || layout.height <= 0) return false;
  // One component: its MCU is one 8 x 8 block whatever its sampling factors.
  layout.mcu_width = components == 1 ? 8 : 8 * h_max;
  layout.mcu_height = components == 1 ? 8 : 8 * v_max;
  layout.columns = (layout.width + layout.mcu_width - 1) / layout.mcu_width;
  layout.rows = (layout.height + layout.mcu_height - 1) / layout.mcu_height;
  // A segment per MCU, or per MCU row.
  if (static_cast<unsigned>(layout.columns) % restart_interval != 0) return false;
  layout.segment_columns = static_cast<int>(restart_interval);
  return find_segments(jpeg, layout);
}

McuWindow window_for_crop(const McuLayout& layout, const CropBox& crop) {
  McuWindow w;
  const int step = layout.segment_columns;  // windows start and end on segment boundaries
  w.column0 = std::clamp(crop.x / layout.mcu_width - 1, 0, layout.columns - 1) / step * step;
  w.column1 = std::clamp((crop.x + crop.width + layout.mcu_width - 1) / layout.mcu_width + 1,
                         w.column0 + 1, layout.columns);
  w.column1 = std::min(layout.columns, (w.column1 + step - 1) / step * step);
  w.row0 = std::clamp(crop.y / layout.mcu_height - 1, 0, layout.rows - 1);
  w.row1 = std::clamp((crop.y + crop.height + layout.mcu_height - 1) / layout.mcu_height + 1,
                      w.row0 + 1, layout.rows);
  return w;
}

void cut_mcu_window(std::span<const std::byte> jpeg, const McuLayout& layout,
                    const McuWindow& window, std::vector<std::byte>& out) {
  const int per_row = layout.columns / layout.segment_columns;
  const int s0 = window.column0 / layout.segment_columns;
  const int s1 = (window.column1 + layout.segment_columns - 1) / layout.segment_columns;
  size_t bytes = layout.header_end + 2;
  for (int r = window.row0; r < window.row1; ++r) {
    const size_t first = static_cast<size_t>(r) * static_cast<size_t>(per_row);
    for (int c = s0; c < s1; ++c) bytes += layout.end[first + c] - layout.begin[first + c] + 2;
  }
  out.resize(bytes);
  std::byte* p = out.data();
  std::memcpy(p, jpeg.data(), layout.header_end);
  const int x = window.column0 * layout.mcu_width, y = window.row0 * layout.mcu_height;
  const int width = std::min(window.column1 * layout.mcu_width, layout.width) - x;
  const int height = std::min(window.row1 * layout.mcu_height, layout.height) - y;
  p[layout.sof + 5] = std::byte(height >> 8);
  p[layout.sof + 6] = std::byte(height & 0xFF);
  p[layout.sof + 7] = std::byte(width >> 8);
  p[layout.sof + 8] = std::byte(width & 0xFF);
  p += layout.header_end;
  unsigned restart = 0;
  for (int r = window.row0; r < window.row1; ++r) {
    const size_t first = static_cast<size_t>(r) * static_cast<size_t>(per_row);
    for (int c = s0; c < s1; ++c) {
      if (p != out.data() + layout.header_end) {
        *p++ = std::byte{0xFF};
        *p++ = std::byte(0xD0 + restart);
        restart = (restart + 1) & 7;
      }
      const size_t n = layout.end[first + c] - layout.begin[first + c];
      std::memcpy(p, jpeg.data() + layout.begin[first + c], n);
      p += n;
    }
  }
  *p++ = std::byte{0xFF};
  *p++ = std::byte{JPEG_EOI};
  out.resize(static_cast<size_t>(p - out.data()));
}

}  // namespace evenfeed
