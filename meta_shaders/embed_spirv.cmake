# cmake -DINPUT=x.spv -DOUTPUT=x.cpp -DNAME=kXSpv -P embed_spirv.cmake
# Writes `extern const uint32_t NAME[]` and `extern const size_t NAMEWords` (the .spv as little-endian 32-bit words).
file(READ ${INPUT} _hex HEX)
string(LENGTH "${_hex}" _length)
math(EXPR _remainder "${_length} % 8")
if(_length EQUAL 0 OR NOT _remainder EQUAL 0)
    message(FATAL_ERROR "${INPUT} is not a whole number of 32-bit words")
endif()
math(EXPR _words "${_length} / 8")
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])" "0x\\4\\3\\2\\1u," _body "${_hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n    " _body "${_body}")
file(WRITE ${OUTPUT} "// Generated from ${INPUT} by meta_shaders/embed_spirv.cmake; do not edit.\n"
    "#include <cstddef>\n#include <cstdint>\n\nnamespace execgraph::meta_shaders {\n"
    "extern const uint32_t ${NAME}[] = {\n    ${_body}\n};\nextern const size_t ${NAME}Words = ${_words};\n}  // namespace execgraph::meta_shaders\n")
