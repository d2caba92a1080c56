// libFuzzer target: MySQL's binary JSON (json_binary_to_text) and the binary JSON diff list of
// PARTIAL_UPDATE_ROWS after images (decode_json_diffs), on the same bytes.
// Decode errors are expected results.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "source/mysql/mysql_json_binary.hpp"

using namespace tidemark::mysql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string text, error;
  (void)json_binary_to_text(bytes, text, error);
  std::vector<JsonDiff> diffs;
  error.clear();
  if (decode_json_diffs(bytes, diffs, error)) {
    for (const JsonDiff& d : diffs) (void)json_diff_op_name(d.op);
  }
  return 0;
}
