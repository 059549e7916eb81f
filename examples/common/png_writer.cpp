#include "png_writer.h"

#include <array>
#include <cstddef>
#include <fstream>

namespace execgraph::examples {
namespace {

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc = 0) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t n = 0; n < 256; ++n) {
            uint32_t c = n;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    crc = ~crc;
    for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

uint32_t Adler32(const std::vector<uint8_t>& data) {
    uint32_t a = 1, b = 0;
    for (uint8_t byte : data) {
        a = (a + byte) % 65521u;
        b = (b + a) % 65521u;
    }
    return (b << 16) | a;
}

void AppendBigEndian32(std::vector<uint8_t>* out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<uint8_t>(value >> shift));
}

// A PNG chunk: length, type, data, CRC over type + data.
void AppendChunk(std::vector<uint8_t>* png, const char type[4], const std::vector<uint8_t>& data) {
    AppendBigEndian32(png, static_cast<uint32_t>(data.size()));
    const size_t type_offset = png->size();
    png->insert(png->end(), type, type + 4);
    png->insert(png->end(), data.begin(), data.end());
    AppendBigEndian32(png, Crc32(png->data() + type_offset, png->size() - type_offset));
}

// `pixels` are packed RGBA8 as the shader writes them: R in the low byte, i.e. bytes R, G, B, A in memory.
}  // namespace

bool WritePng(const std::string& path, const std::vector<uint32_t>& pixels, uint32_t width, uint32_t height) {
    // Raw image data: every row starts with its filter type (0 = none), then 4 bytes per pixel.
    std::vector<uint8_t> raw;
    raw.reserve(static_cast<size_t>(height) * (1 + 4 * width));
    for (uint32_t y = 0; y < height; ++y) {
        raw.push_back(0);
        for (uint32_t x = 0; x < width; ++x) {
            const uint32_t p = pixels[static_cast<size_t>(y) * width + x];
            for (int shift = 0; shift < 32; shift += 8) raw.push_back(static_cast<uint8_t>(p >> shift));
        }
    }
    // zlib: header (deflate, 32 KiB window, no dictionary, check bits), stored blocks of at most 65535 bytes, Adler-32.
    std::vector<uint8_t> zlib = {0x78, 0x01};
    for (size_t offset = 0; offset < raw.size() || offset == 0;) {
        const size_t length = std::min<size_t>(65535, raw.size() - offset);
        const bool final_block = offset + length == raw.size();
        zlib.push_back(final_block ? 1 : 0);  // BFINAL bit, BTYPE 00 = stored
        zlib.push_back(static_cast<uint8_t>(length));
        zlib.push_back(static_cast<uint8_t>(length >> 8));
        zlib.push_back(static_cast<uint8_t>(~length));
        zlib.push_back(static_cast<uint8_t>(~length >> 8));
        zlib.insert(zlib.end(), raw.begin() + static_cast<std::ptrdiff_t>(offset),
                    raw.begin() + static_cast<std::ptrdiff_t>(offset + length));
        offset += length;
        if (final_block) break;
    }
    AppendBigEndian32(&zlib, Adler32(raw));

    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::vector<uint8_t> header;
    AppendBigEndian32(&header, width);
    AppendBigEndian32(&header, height);
    header.insert(header.end(), {8, 6, 0, 0, 0});  // bit depth 8, colour type 6 (RGBA), deflate, filter 0, no interlace
    AppendChunk(&png, "IHDR", header);
    AppendChunk(&png, "IDAT", zlib);
    AppendChunk(&png, "IEND", {});

    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
    return static_cast<bool>(file);
}

}  // namespace execgraph::examples
