#pragma once
// Text that users control (signal rows, their conditions) goes into logs, the state file and `tidemark
// status` only as an excerpt, so a 10 MB row cannot become a 10 MB log line or state file.

#include <string>
#include <string_view>

namespace tidemark {

// `text` when it has at most `max_bytes`; otherwise its first bytes (cut before a UTF-8 continuation byte)
// and how long it was.
inline std::string excerpt(std::string_view text, size_t max_bytes = 200) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace tidemark
