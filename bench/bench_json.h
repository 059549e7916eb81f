// JSON text for the benchmarks' --json output (no JSON library in the build).
#pragma once

#include <cstdio>
#include <string>

namespace execgraph::bench {

inline std::string JsonString(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

inline std::string JsonNumber(double value) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.6g", value);
    return text;
}

}  // namespace execgraph::bench
