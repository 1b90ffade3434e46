# cmake -DINPUT=FILE -DOUTPUT=FILE.cc -DSYMBOL=NAME -P embed_text.cmake: FILE's bytes as a
# NUL-terminated char array `gpuprobe::tools::assets::NAME`, for what a self-contained page
# inlines (the chart library Debian installs, the page's own script and style).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," chars "${hex}")
string(REGEX REPLACE "(('[^']*',){24})" "\\1\n" chars "${chars}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/embed_text.cmake. Do not edit.\n"
     "#include <cstddef>\n"
     "namespace gpuprobe::tools::assets {\n"
     "extern const char ${SYMBOL}[] = {\n${chars}'\\0'};\n"
     "extern const std::size_t ${SYMBOL}_size = ${bytes};\n"
     "}  // namespace gpuprobe::tools::assets\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
