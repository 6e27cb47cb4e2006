// Motion-JPEG frames (from webcams, capture cards and AVI files, "AVI1" in their APP0)
// leave out their Huffman tables when they are the standard ones of ITU T.81 Annex K.3:
// a decoder is expected to supply them. libjpeg supplies them only to a decoder object
// that has no table in that slot yet, so a reused decoder would use the tables of the
// last image it read instead (jpeg_probe.h), and every reader here refuses such a
// frame. `convert` therefore writes the standard tables into the file first, which is
// what a fresh libjpeg decoder (and so PIL and torchvision) decodes it with.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace evenfeed {

// When `jpeg` is a Huffman-coded DCT frame whose first scan uses a DC or AC table in
// slot 0 or 1 that its header does not define, writes to `out` the same bytes with one
// DHT segment inserted before the first scan, holding the standard table for every
// slot 0 and 1 not yet defined (luminance in slot 0, chrominance in slot 1, as libjpeg
// assigns them), and returns true. Otherwise (nothing missing, a missing table in slot 2
// or 3, arithmetic coding, an unreadable header) returns false and leaves `out` alone.
bool add_default_huffman_tables(std::span<const std::byte> jpeg, std::vector<std::byte>& out);

}  // namespace evenfeed
