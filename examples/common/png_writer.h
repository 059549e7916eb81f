// A minimal PNG writer shared by the examples and the GPU tests: 8-bit RGBA, no filtering, and a zlib stream of
// *stored* (uncompressed) deflate blocks, which every PNG reader accepts. Images here are small, so compression is not
// worth a dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace execgraph::examples {

// `pixels` holds width * height RGBA8 values packed little-endian (R in the low byte), row by row.
bool WritePng(const std::string& path, const std::vector<uint32_t>& pixels, uint32_t width, uint32_t height);

}  // namespace execgraph::examples
