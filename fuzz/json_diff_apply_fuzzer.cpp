// libFuzzer target: applying MySQL JSON diffs to a document (apply_json_diffs), with the path parser and
// the text normalizer it uses.
//
// Input, NUL-separated (JSON text holds no raw NUL): the before document, then diffs, each
// `<op byte><path>` NUL `<value JSON text>` NUL (op byte mod 3: replace, insert, remove; a remove's value
// is ignored). At most 64 diffs.
// Errors (invalid JSON, bad paths, diffs MySQL would reject) are expected results.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "source/mysql/json_diff_apply.hpp"

using namespace tidemark::mysql;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tidemark::fuzz::FuzzInput in(data, size);
  const std::string document(in.until('\0'));
  std::vector<JsonDiff> diffs;
  while (!in.at_end() && diffs.size() < 64) {
    JsonDiff d;
    d.op = static_cast<JsonDiffOp>(in.u8() % 3);
    d.path = std::string(in.until('\0'));
    d.value = std::string(in.until('\0'));
    if (d.op == JsonDiffOp::Remove) d.value.clear();
    diffs.push_back(std::move(d));
  }
  std::string out, error;
  (void)normalize_mysql_json_text(document, out, error);
  for (const JsonDiff& d : diffs) {
    std::vector<JsonPathLeg> legs;
    (void)parse_json_path(d.path, legs, error);
  }
  (void)apply_json_diffs(document, diffs, out, error);
  return 0;
}
