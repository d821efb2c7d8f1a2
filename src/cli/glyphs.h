// A 5x7 bitmap font for the preview's labels: capitals, digits and the punctuation that command
// lines use. Lower-case letters are drawn as capitals; anything else as '?'. Kept in the source
// so that the preview needs no font file or font library at run time.
#pragma once

#include <array>
#include <cstdint>

namespace ndconv::cli {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;

/// The rows of `c`, top first; bit 4 of a row is its leftmost pixel.
const std::array<uint8_t, kGlyphHeight>& glyph(char c);

}  // namespace ndconv::cli
