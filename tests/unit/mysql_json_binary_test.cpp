// MySQL 8 binary JSON -> text, and PARTIAL_UPDATE_ROWS JSON diffs, on hand-made byte sequences laid out as
// MySQL's json_binary.h documents them (no MySQL 8 server is available here; MariaDB stores JSON as text).

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "source/mysql/mysql_json_binary.hpp"
#include "source/mysql/row_decoder.hpp"

namespace tidemark::mysql {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string text(const std::string& doc) {
  std::string out, error;
  EXPECT_TRUE(json_binary_to_text(doc, out, error)) << error;
  return out;
}

const std::string kObject = bytes({0x00, 0x01, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x05, 0x01, 0x00, 'a'});
const std::string kArray = bytes({0x02, 0x03, 0x00, 0x18, 0x00,                         // count 3, size 24
                                  0x04, 0x01, 0x00, 0x0c, 0x0d, 0x00, 0x0b, 0x10, 0x00,  // true, @13 string, @16 double
                                  0x02, 'x', 'y', 0, 0, 0, 0, 0, 0, 0xf8, 0x3f});

TEST(MysqlJsonBinary, ScalarsObjectsArrays) {
  EXPECT_EQ(text(kObject), R"({"a": 1})");
  EXPECT_EQ(text(kArray), R"([true, "xy", 1.5])");
  EXPECT_EQ(text(bytes({0x0c, 0x04, 'a', '"', 'b', '\n'})), R"("a\"b\n")");
  EXPECT_EQ(text(bytes({0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})), "-1");
  EXPECT_EQ(text(bytes({0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})), "18446744073709551615");
  EXPECT_EQ(text(bytes({0x0b, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})), "1.0");
  EXPECT_EQ(text(bytes({0x04, 0x00})), "null");
  EXPECT_EQ(text(bytes({0x04, 0x02})), "false");
  EXPECT_EQ(text(""), "null");
  // Large object {"k": -5}: 4-byte count/size/offsets, int32 inlined.
  EXPECT_EQ(text(bytes({0x01, 1, 0, 0, 0, 20, 0, 0, 0, 19, 0, 0, 0, 1, 0, 0x07, 0xfb, 0xff, 0xff, 0xff, 'k'})),
            R"({"k": -5})");
  // Nested: {"a": {"a": 1}} (the inner object at offset 11).
  std::string nested = bytes({0x00, 0x01, 0x00, 24, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x00, 12, 0x00, 'a'}) + kObject.substr(1);
  EXPECT_EQ(text(nested), R"({"a": {"a": 1}})");
}

TEST(MysqlJsonBinary, OpaqueValues) {
  // DECIMAL(4,2) 12.34
  EXPECT_EQ(text(bytes({0x0f, 246, 4, 4, 2, 0x8c, 0x22})), "12.34");
  // DATE 2024-01-02 and DATETIME 2024-01-02 03:04:05.5 as packed 8-byte integers.
  const uint64_t ymd = (uint64_t{2024 * 13 + 1} << 5) | 2;
  auto packed = [](uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return s;
  };
  EXPECT_EQ(text(bytes({0x0f, 10, 8}) + packed((ymd << 17) << 24)), R"("2024-01-02")");
  const uint64_t hms = (3u << 12) | (4u << 6) | 5u;
  EXPECT_EQ(text(bytes({0x0f, 12, 8}) + packed((((ymd << 17) | hms) << 24) + 500000)),
            R"("2024-01-02 03:04:05.500000")");
  EXPECT_EQ(text(bytes({0x0f, 11, 8}) + packed(static_cast<uint64_t>(-static_cast<int64_t>((hms << 24) + 1)))),
            R"("-03:04:05.000001")");
  // Other opaque types: MySQL's base64 form.
  EXPECT_EQ(text(bytes({0x0f, 252, 2, 'h', 'i'})), R"("base64:type252:aGk=")");
}

TEST(MysqlJsonBinary, MalformedDocumentsAreErrors) {
  std::string out, error;
  for (const std::string& doc : {kObject, kArray}) {
    for (size_t n = 1; n < doc.size(); ++n) {
      EXPECT_FALSE(json_binary_to_text(doc.substr(0, n), out, error)) << n;
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_FALSE(json_binary_to_text(bytes({0x0e}), out, error));
  EXPECT_NE(error.find("unknown value type"), std::string::npos);
  EXPECT_FALSE(json_binary_to_text(bytes({0x04, 0x07}), out, error));
  // 200 nested one-element arrays.
  std::string inner = bytes({0x02, 0x01, 0x00, 0x07, 0x00, 0x04, 0x00, 0x00});  // [null]
  for (int i = 0; i < 200; ++i) {
    const std::string body = inner.substr(1);
    const size_t size = 7 + body.size();
    inner = bytes({0x02, 0x01, 0x00, static_cast<int>(size & 0xff), static_cast<int>(size >> 8), inner[0], 0x07, 0x00}) + body;
    if (size > 0xffff) break;
  }
  EXPECT_FALSE(json_binary_to_text(inner, out, error));
  EXPECT_NE(error.find("nesting"), std::string::npos) << error;
  // Random mutations never crash.
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string d = (i % 2 ? kObject : kArray);
    d[rng() % d.size()] = static_cast<char>(rng());
    (void)json_binary_to_text(d, out, error);
  }
}

TEST(MysqlJsonBinary, Diffs) {
  const std::string diff = bytes({0x00, 0x03, '$', '.', 'a', 0x02, 0x04, 0x01,  // replace $.a true
                                  0x01, 0x04, '$', '[', '0', ']', 0x03, 0x05, 0x07, 0x00,  // insert $[0] 7
                                  0x02, 0x03, '$', '.', 'b'});                      // remove $.b
  std::vector<JsonDiff> out;
  std::string error;
  ASSERT_TRUE(decode_json_diffs(diff, out, error)) << error;
  EXPECT_EQ(out, (std::vector<JsonDiff>{{JsonDiffOp::Replace, "$.a", "true"},
                                        {JsonDiffOp::Insert, "$[0]", "7"},
                                        {JsonDiffOp::Remove, "$.b", ""}}));
  for (size_t n = 1; n < diff.size(); ++n) {
    if (n == 8 || n == 18) continue;  // whole operations
    EXPECT_FALSE(decode_json_diffs(diff.substr(0, n), out, error)) << n;
  }
  EXPECT_FALSE(decode_json_diffs(bytes({0x03, 0x00}), out, error));
  EXPECT_NE(error.find("unknown JSON diff operation 3"), std::string::npos);
}

TEST(MysqlJsonBinary, PartialUpdateRowsCarryDiffsAndUnavailable) {
  TableMap t;
  ColumnDef id;
  id.type = ColumnType::Long;
  ColumnDef j;
  j.type = ColumnType::Json;
  j.meta = 4;
  t.columns = {id, j};
  RowsEvent e;
  e.event_type = 39;
  e.kind = RowsKind::PartialUpdate;
  e.column_count = 2;
  e.before_columns = "\x03";
  e.after_columns = "\x03";
  e.rows = bytes({0x00, 1, 0, 0, 0, 2, 0, 0, 0, 0x04, 0x02,          // before: id 1, j false
                  0x01, 0x01, 0x00, 1, 0, 0, 0,                        // after: options, partial bits, nulls, id
                  8, 0, 0, 0, 0x00, 0x03, '$', '.', 'a', 0x02, 0x04, 0x01});  // j: replace $.a true
  std::vector<RowChange> out;
  auto err = decode_rows(e, t, out);
  ASSERT_FALSE(err.has_value()) << err->message;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*out[0].before, (Row{Value(int64_t{1}), Value(Json{"false"})}));
  EXPECT_EQ(*out[0].after, (Row{Value(int64_t{1}), Value(Unavailable{})}));
  ASSERT_EQ(out[0].partial_json.size(), 1u);
  EXPECT_EQ(out[0].partial_json[0].column, 1u);
  EXPECT_EQ(out[0].partial_json[0].diffs, (std::vector<JsonDiff>{{JsonDiffOp::Replace, "$.a", "true"}}));
  // Without the PARTIAL_JSON option bit the after image holds a full document.
  e.rows = bytes({0x00, 1, 0, 0, 0, 2, 0, 0, 0, 0x04, 0x02, 0x00, 0x00, 1, 0, 0, 0, 2, 0, 0, 0, 0x04, 0x01});
  out.clear();
  ASSERT_FALSE(decode_rows(e, t, out).has_value());
  EXPECT_EQ(*out[0].after, (Row{Value(int64_t{1}), Value(Json{"true"})}));
}

}  // namespace
}  // namespace tidemark::mysql
