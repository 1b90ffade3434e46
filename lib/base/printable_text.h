// Text that came from outside (a dump's reason from POST /dump, a dump.json read back) made safe
// for a terminal and for a one-line log: what it returns is valid UTF-8 of at most `max_bytes`
// bytes with no control characters — no escape sequences, no line breaks, no bidirectional
// overrides. Each one left out is written as its code instead (ESC as "\x1b", U+202E as
// "\u202e"), as is each byte that is not UTF-8, so nothing is lost silently.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuprobe::base {

// `text` made printable (see above), cut at a character's boundary to at most `max_bytes` bytes,
// its end then marked "..." (within the bound). Never throws but std::bad_alloc.
std::string printable_text(std::string_view text, std::size_t max_bytes);

}  // namespace gpuprobe::base
