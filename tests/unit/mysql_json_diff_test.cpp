// MySQL 8 PARTIAL_UPDATE_ROWS JSON diffs applied to the before document (json_diff_apply), and the same
// on hand-built event bytes fed through BinlogChangeBuilder. The expected documents are written by hand
// from MySQL's semantics (sql/json_diff.cc apply_json_diffs, sql-common/json_path.cc), not computed.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/mysql/binlog_change_builder.hpp"
#include "source/mysql/binlog_cursor.hpp"
#include "source/mysql/json_diff_apply.hpp"
#include "source/mysql/mysql_json_binary.hpp"

namespace tidemark::mysql {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------
// A test-side encoder of MySQL's binary JSON (json_binary.h), small containers only: objects and arrays
// with 2-byte counts, sizes and offsets; keys sorted as MySQL stores them (length, then bytes); literals
// and int16 inlined in the value entry; other ints as int64, doubles, strings with a 7-bit varlen length.

std::pair<uint8_t, std::string> encode(const json& j);

void put_u16(std::string& out, size_t v) { put_le<uint16_t>(out, static_cast<uint16_t>(v)); }

std::string encode_container(const json& j) {
  const bool object = j.is_object();
  std::vector<std::pair<std::string, const json*>> items;
  for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(object ? it.key() : std::string(), &it.value());
  if (object)
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
      return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
    });
  const size_t n = items.size();
  const size_t header = 4 + (object ? 4 * n : 0) + 3 * n;
  std::string key_entries, keys;
  for (const auto& [key, value] : items) {
    if (!object) break;
    put_u16(key_entries, header + keys.size());
    put_u16(key_entries, key.size());
    keys += key;
  }
  std::string value_entries, data;
  const size_t data_start = header + keys.size();
  for (const auto& [key, value] : items) {
    if (value->is_null() || value->is_boolean()) {
      value_entries.push_back(0x04);
      put_u16(value_entries, value->is_null() ? 0 : value->get<bool>() ? 1 : 2);
    } else if (value->is_number_integer() && !value->is_number_unsigned() && value->get<int64_t>() >= -32768 &&
               value->get<int64_t>() <= 32767) {
      value_entries.push_back(0x05);
      put_le<uint16_t>(value_entries, static_cast<uint16_t>(value->get<int64_t>()));
    } else if (value->is_number_unsigned() && value->get<uint64_t>() <= 32767) {
      value_entries.push_back(0x05);
      put_u16(value_entries, value->get<uint64_t>());
    } else {
      auto [type, bytes] = encode(*value);
      value_entries.push_back(static_cast<char>(type));
      put_u16(value_entries, data_start + data.size());
      data += bytes;
    }
  }
  std::string out;
  put_u16(out, n);
  put_u16(out, data_start + data.size());
  return out + key_entries + value_entries + keys + data;
}

std::pair<uint8_t, std::string> encode(const json& j) {
  std::string out;
  switch (j.type()) {
    case json::value_t::object: return {0x00, encode_container(j)};
    case json::value_t::array: return {0x02, encode_container(j)};
    case json::value_t::null: return {0x04, std::string(1, '\x00')};
    case json::value_t::boolean: return {0x04, std::string(1, j.get<bool>() ? '\x01' : '\x02')};
    case json::value_t::number_unsigned:
      if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        put_le<uint64_t>(out, j.get<uint64_t>());
        return {0x0a, out};
      }
      [[fallthrough]];
    case json::value_t::number_integer: put_le<uint64_t>(out, static_cast<uint64_t>(j.get<int64_t>())); return {0x09, out};
    case json::value_t::number_float: {
      const double d = j.get<double>();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, 8);
      put_le<uint64_t>(out, bits);
      return {0x0b, out};
    }
    case json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      size_t len = s.size();
      do {
        out.push_back(static_cast<char>((len & 0x7f) | (len > 0x7f ? 0x80 : 0)));
        len >>= 7;
      } while (len > 0);
      return {0x0c, out + s};
    }
    default: ADD_FAILURE() << "cannot encode " << j.dump(); return {0x04, std::string(1, '\x00')};
  }
}

std::string to_binary(const std::string& json_text) {
  auto [type, bytes] = encode(json::parse(json_text));
  return std::string(1, static_cast<char>(type)) + bytes;
}

// The text our binary decoder gives a full document: what an after image logged whole would read.
std::string decoded(const std::string& json_text) {
  std::string out, error;
  EXPECT_TRUE(json_binary_to_text(to_binary(json_text), out, error)) << error;
  return out;
}

std::string apply(const std::string& doc, const std::vector<JsonDiff>& diffs) {
  std::string out, error;
  EXPECT_TRUE(apply_json_diffs(doc, diffs, out, error)) << error;
  return out;
}

std::string apply_error(const std::string& doc, const std::vector<JsonDiff>& diffs) {
  std::string out = "untouched", error;
  EXPECT_FALSE(apply_json_diffs(doc, diffs, out, error)) << out;
  EXPECT_EQ(out, "untouched");
  return error;
}

JsonDiff replace(std::string path, std::string value) { return {JsonDiffOp::Replace, std::move(path), std::move(value)}; }
JsonDiff insert(std::string path, std::string value) { return {JsonDiffOp::Insert, std::move(path), std::move(value)}; }
JsonDiff remove(std::string path) { return {JsonDiffOp::Remove, std::move(path), ""}; }

JsonPathLeg member(std::string name) { return {JsonPathLeg::Kind::Member, std::move(name), 0, false}; }
JsonPathLeg cell(uint32_t index, bool from_end = false) { return {JsonPathLeg::Kind::ArrayCell, "", index, from_end}; }

// ---------------------------------------------------------------------------------------------------

TEST(MysqlJsonDiff, TestEncoderMatchesTheDecoder) {
  // The encoder above lays {"a": 1} out byte for byte as mysql_json_binary_test's kObject.
  EXPECT_EQ(to_binary(R"({"a": 1})"), std::string("\x00\x01\x00\x0c\x00\x0b\x00\x01\x00\x05\x01\x00" "a", 13));
  EXPECT_EQ(decoded(R"({"bb": [1, 70000, "x"], "a": {"c": null, "d": 2.5}})"),
            R"({"a": {"c": null, "d": 2.5}, "bb": [1, 70000, "x"]})");
}

TEST(MysqlJsonDiff, PathSyntax) {
  std::vector<JsonPathLeg> legs;
  std::string error;
  ASSERT_TRUE(parse_json_path(R"($.a[2]."key with space")", legs, error)) << error;
  EXPECT_EQ(legs, (std::vector<JsonPathLeg>{member("a"), cell(2), member("key with space")}));
  ASSERT_TRUE(parse_json_path(" $ . a [ last - 1 ] [last] [ 0 ]", legs, error)) << error;
  EXPECT_EQ(legs, (std::vector<JsonPathLeg>{member("a"), cell(1, true), cell(0, true), cell(0)}));
  ASSERT_TRUE(parse_json_path(R"($."a\"b\\c"."".x_1$.\u0041b)", legs, error)) << error;
  EXPECT_EQ(legs, (std::vector<JsonPathLeg>{member("a\"b\\c"), member(""), member("x_1$"), member("Ab")}));
  ASSERT_TRUE(parse_json_path("$", legs, error)) << error;
  EXPECT_TRUE(legs.empty());
  ASSERT_TRUE(parse_json_path("$.\xc3\xa9t\xc3\xa9", legs, error)) << error;  // non-ASCII identifier
  EXPECT_EQ(legs, (std::vector<JsonPathLeg>{member("\xc3\xa9t\xc3\xa9")}));

  for (const char* bad : {"", "a.b", "$.", "$.1a", "$.a-b", "$.*", "$[*]", "$**.a", "$[1 to 2]", "$[", "$[x]", "$[1",
                          "$[-1]", "$.\"unterminated", "$.\"bad \\q escape\"", "$[4294967296]", "$a", "$[last-]"}) {
    EXPECT_FALSE(parse_json_path(bad, legs, error)) << bad;
    EXPECT_NE(error.find("bad JSON path"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_TRUE(parse_json_path("$[4294967295]", legs, error)) << error;
  EXPECT_FALSE(parse_json_path("$.a.1b", legs, error));
  EXPECT_EQ(error, "bad JSON path '$.a.1b' at byte 4: an unquoted member name must be an ECMAScript identifier "
                   "(quote it: .\"name\")");
}

const std::string kDoc = R"({"a": 1, "b": {"c": [10, 20, 30], "key with space": "x"}, "arr": [1, [2, 3]]})";

TEST(MysqlJsonDiff, Replace) {
  EXPECT_EQ(apply(kDoc, {replace("$.a", R"("new")")}),
            R"({"a": "new", "b": {"c": [10, 20, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {replace("$.b.c[1]", "99")}),
            R"({"a": 1, "b": {"c": [10, 99, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {replace("$.b.c[last]", "-1"), replace("$.b.c[last-2]", "0")}),
            R"({"a": 1, "b": {"c": [0, 20, -1], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {replace(R"($.b."key with space")", R"({"z": null, "y": [true, false]})")}),
            R"({"a": 1, "b": {"c": [10, 20, 30], "key with space": {"y": [true, false], "z": null}}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {replace("$.arr[1][0]", "2.5"), replace("$.b", "[]")}), R"({"a": 1, "b": [], "arr": [1, [2.5, 3]]})");
  // A scalar document's member cannot be addressed, but an array at the root can.
  EXPECT_EQ(apply("[1, 2]", {replace("$[0]", R"("x")")}), R"(["x", 2])");
}

TEST(MysqlJsonDiff, Insert) {
  // Arrays: insert at the index shifts later elements; past the end appends; [last] is the last element's
  // index, so the value goes before it.
  EXPECT_EQ(apply(kDoc, {insert("$.b.c[1]", "15")}),
            R"({"a": 1, "b": {"c": [10, 15, 20, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {insert("$.b.c[0]", "5"), insert("$.b.c[99]", "40")}),
            R"({"a": 1, "b": {"c": [5, 10, 20, 30, 40], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {insert("$.b.c[last]", "25")}),
            R"({"a": 1, "b": {"c": [10, 20, 25, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {insert("$.b.c[last-7]", "0")}),
            R"({"a": 1, "b": {"c": [0, 10, 20, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply("[]", {insert("$[0]", "1"), insert("$[5]", "2")}), "[1, 2]");
  // Objects: a new member, placed where MySQL's binary format stores it (shorter keys first).
  EXPECT_EQ(apply(kDoc, {insert("$.b.new", "{}"), insert(R"($."")", "0")}),
            R"({"": 0, "a": 1, "b": {"c": [10, 20, 30], "new": {}, "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {insert("$.arr[1][1]", R"({"k": "v"})")}),
            R"({"a": 1, "b": {"c": [10, 20, 30], "key with space": "x"}, "arr": [1, [2, {"k": "v"}, 3]]})");
}

TEST(MysqlJsonDiff, Remove) {
  EXPECT_EQ(apply(kDoc, {remove("$.a")}), R"({"b": {"c": [10, 20, 30], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {remove("$.b.c[0]"), remove("$.b.c[last]")}),
            R"({"a": 1, "b": {"c": [20], "key with space": "x"}, "arr": [1, [2, 3]]})");
  EXPECT_EQ(apply(kDoc, {remove(R"($.b."key with space")"), remove("$.arr[1]")}),
            R"({"a": 1, "b": {"c": [10, 20, 30]}, "arr": [1]})");
}

TEST(MysqlJsonDiff, DiffsApplyInOrderEachToThePreviousResult) {
  // JSON_ARRAY_INSERT(doc, '$[0]', 'x') then JSON_SET(doc, '$[0]', 'y') then JSON_REMOVE(doc, '$[1]').
  EXPECT_EQ(apply("[1, 2]", {insert("$[0]", R"("x")"), replace("$[0]", R"("y")"), remove("$[1]")}), R"(["y", 2])");
  EXPECT_EQ(apply(R"({"a": 1})", {remove("$.a"), insert("$.a", "2")}), R"({"a": 2})");
  EXPECT_EQ(apply(R"({"a": 1})", {}), R"({"a": 1})");
}

TEST(MysqlJsonDiff, OutputIsTheDecodersFormOfTheNewDocument) {
  // Key order, separators, string escapes and number text as json_binary_to_text prints a full document.
  const std::string doc = decoded(R"({"bb": 1, "a": 2, "ab": 3, "B": 4, "s": "q\"b\n\u0001\u00e9/", "d": 1.5,
                                      "e": 1e20, "f": 1.0, "big": 18446744073709551615, "neg": -70000})");
  EXPECT_EQ(doc, R"({"B": 4, "a": 2, "d": 1.5, "e": 1e+20, "f": 1.0, "s": "q\"b\n\u0001)" "\xc3\xa9"
                 R"(/", "ab": 3, "bb": 1, "big": 18446744073709551615, "neg": -70000})");
  EXPECT_EQ(apply(doc, {replace("$.bb", "10")}),
            decoded(R"({"bb": 10, "a": 2, "ab": 3, "B": 4, "s": "q\"b\n\u0001\u00e9/", "d": 1.5, "e": 1e20, "f": 1.0,
                        "big": 18446744073709551615, "neg": -70000})"));
  // Numbers keep the text they came with: a DECIMAL inside a JSON document prints with its scale.
  EXPECT_EQ(apply(R"({"price": 1.50, "qty": 2})", {replace("$.qty", "3")}), R"({"qty": 3, "price": 1.50})");
  EXPECT_EQ(apply("{\"a\":[1,2] ,\n \"b\" : {}}", {}), R"({"a": [1, 2], "b": {}})");
  std::string out, error;
  ASSERT_TRUE(normalize_mysql_json_text(R"({"zz":1,"y":[true,null,"\u0000"]})", out, error)) << error;
  EXPECT_EQ(out, R"({"y": [true, null, "\u0000"], "zz": 1})");
}

TEST(MysqlJsonDiff, RejectedDiffsAreErrorsWithContext) {
  auto has = [](const std::string& error, const std::string& part) {
    EXPECT_NE(error.find(part), std::string::npos) << error << " should contain " << part;
  };
  has(apply_error(kDoc, {replace("$.a", "2"), replace("$.nope", "1")}), "JSON diff 2 of 2 (replace $.nope): no member .\"nope\"");
  has(apply_error(kDoc, {replace("$.b.c[3]", "1")}), "array index [3] is out of bounds (3 elements)");
  has(apply_error(kDoc, {replace("$.b.c[last-3]", "1")}), "array index [last-3] is out of bounds");
  // No auto-wrapping: a scalar is not a one-element array.
  has(apply_error(kDoc, {replace("$.a[0]", "1")}), "leg [0] applied to a scalar");
  has(apply_error(kDoc, {replace("$.b[0]", "1")}), "leg [0] applied to an object");
  has(apply_error(kDoc, {insert("$.a", "2")}), "(insert $.a): member .\"a\" already exists");
  has(apply_error(kDoc, {insert("$.a.x", "2")}), "cannot insert .\"x\" into a scalar");
  has(apply_error(kDoc, {insert("$.b.c.x", "2")}), "cannot insert .\"x\" into an array");
  has(apply_error(kDoc, {insert("$.b[0]", "2")}), "cannot insert [0] into an object");
  has(apply_error(kDoc, {insert("$.q.x", "2")}), "no member .\"q\"");
  has(apply_error(kDoc, {remove("$.b.c[3]")}), "(remove $.b.c[3]): array index [3] is out of bounds");
  has(apply_error(kDoc, {remove("$.zz")}), "no member .\"zz\"");
  has(apply_error(kDoc, {remove("$.a[0]")}), "cannot remove [0] from a scalar");
  for (const auto& diff : {replace("$", "1"), insert("$", "1"), remove("$")})
    has(apply_error(kDoc, {diff}), "the root cannot be the target of a diff");
  has(apply_error(kDoc, {replace("$.b[*]", "1")}), "bad JSON path '$.b[*]' at byte 4: '[*]' addresses several values");
  has(apply_error(kDoc, {replace("$.a", "{bad")}), "value: invalid JSON");
  has(apply_error("{\"a\": ", {replace("$.a", "1")}), "before document: invalid JSON");
  has(apply_error("", {}), "before document: invalid JSON");
  has(apply_error("null", {replace("$.a", "1")}), "leg .\"a\" applied to a scalar");
  // Nesting deeper than any stored document is refused rather than recursed into.
  has(apply_error(std::string(2000, '[') + std::string(2000, ']'), {}), "nested deeper than");
}

// ---------------------------------------------------------------------------------------------------
// End to end: TABLE_MAP + PARTIAL_UPDATE_ROWS + XID, as a MySQL 8 server with binlog_row_metadata=FULL,
// binlog_row_image=FULL and binlog_row_value_options=PARTIAL_JSON writes them (rows_event.h,
// sql/rpl_record.cc), through BinlogChangeBuilder.

// v4 header (timestamp 4, type 1, server_id 4, event_size 4, log_pos 4, flags 2), body, CRC32.
std::string make_event(uint8_t type, const std::string& body, uint32_t log_pos) {
  std::string e;
  put_le<uint32_t>(e, 1700000000);
  e.push_back(static_cast<char>(type));
  put_le<uint32_t>(e, 1);
  put_le<uint32_t>(e, static_cast<uint32_t>(19 + body.size() + 4));
  put_le<uint32_t>(e, log_pos);
  put_le<uint16_t>(e, 0);
  e += body;
  put_le<uint32_t>(e, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.data()), static_cast<uInt>(e.size()))));
  return e;
}

// CREATE TABLE db.docs (id INT NOT NULL PRIMARY KEY, doc JSON): TABLE_MAP with FULL metadata.
std::string docs_table_map(uint64_t table_id) {
  std::string b;
  put_le<uint64_t>(b, table_id, 6);
  put_le<uint16_t>(b, 1);
  b += std::string("\x02" "db\x00", 4);
  b += std::string("\x04" "docs\x00", 6);
  put_packed(b, 2);
  b += std::string("\x03\xf5", 2);  // LONG, JSON
  put_packed(b, 1);
  b.push_back(4);     // JSON: 4 length bytes
  b.push_back(0x02);  // doc is nullable
  b.push_back(4);     // COLUMN_NAME
  put_packed(b, 7);
  b += "\x02id\x03" "doc";
  b.push_back(8);  // SIMPLE_PRIMARY_KEY
  put_packed(b, 1);
  b.push_back(0);
  return b;
}

// One diff (Json_diff::write_binary): operation, packed path length, path, [packed value length, binary value].
std::string diff_bytes(JsonDiffOp op, const std::string& path, const std::string& value_json = "") {
  std::string b(1, static_cast<char>(op));
  put_packed(b, path.size());
  b += path;
  if (op != JsonDiffOp::Remove) {
    const std::string value = to_binary(value_json);
    put_packed(b, value.size());
    b += value;
  }
  return b;
}

std::string le32_prefixed(const std::string& s) {
  std::string b;
  put_le<uint32_t>(b, static_cast<uint32_t>(s.size()));
  return b + s;
}

// One PARTIAL_UPDATE_ROWS row: before image (NULL bits, id, doc or NULL), after image (value_options
// PARTIAL_JSON, partial bits: doc is a diff, NULL bits, id, the diff vector).
std::string partial_row(uint32_t id, const std::string* before_doc, const std::string& diffs) {
  std::string b;
  b.push_back(before_doc ? 0x00 : 0x02);
  put_le<uint32_t>(b, id);
  if (before_doc) b += le32_prefixed(to_binary(*before_doc));
  b += std::string("\x01\x01\x00", 3);
  put_le<uint32_t>(b, id);
  return b + le32_prefixed(diffs);
}

TEST(MysqlJsonDiff, PartialUpdateRowsThroughTheChangeBuilder) {
  const std::string before_doc = R"({"name": "pen", "tags": ["a", "c"], "price": {"amount": 3, "currency": "EUR"}})";
  // UPDATE db.docs SET doc = JSON_REMOVE(JSON_SET(JSON_ARRAY_INSERT(JSON_REPLACE(doc, '$.price.amount', 4),
  //   '$.tags[1]', 'b'), '$."in stock"', true), '$.name'):
  const std::string diffs = diff_bytes(JsonDiffOp::Replace, "$.price.amount", "4") +
                            diff_bytes(JsonDiffOp::Insert, "$.tags[1]", R"("b")") +
                            diff_bytes(JsonDiffOp::Insert, R"($."in stock")", "true") +
                            diff_bytes(JsonDiffOp::Remove, "$.name");
  // By hand: amount 3 -> 4, "b" between "a" and "c", a new member "in stock", no "name"; keys in MySQL's
  // stored order (tags 4 bytes, price 5, "in stock" 8; amount 6, currency 8).
  const std::string expected = R"({"tags": ["a", "b", "c"], "price": {"amount": 4, "currency": "EUR"}, "in stock": true})";

  std::string rows;
  put_le<uint64_t>(rows, 42, 6);
  put_le<uint16_t>(rows, 1);  // STMT_END_F
  put_le<uint16_t>(rows, 2);  // no extra data
  put_packed(rows, 2);
  rows += std::string("\x03\x03", 2);  // before and after column bitmaps
  rows += partial_row(1, &before_doc, diffs);
  rows += partial_row(2, nullptr, diff_bytes(JsonDiffOp::Replace, "$.a", "1"));  // NULL before: cannot apply
  rows += partial_row(3, &before_doc, diff_bytes(JsonDiffOp::Remove, "$.missing"));  // MySQL would reject it
  std::string xid;
  put_le<uint64_t>(xid, 77);

  BinlogChangeBuilder::Options options;
  options.flavor = Flavor::MySql;
  options.table_patterns = {"db.*"};
  options.initial_checksum = ChecksumAlgorithm::Crc32;
  BinlogPosition start;
  start.flavor = Flavor::MySql;
  start.file = "binlog.000001";
  BinlogChangeBuilder builder(options, nullptr, start);
  std::vector<ChangeEvent> events;
  const BinlogChangeBuilder::Emit emit = [&](StreamItem&& item) {
    if (auto* e = std::get_if<ChangeEvent>(&item)) events.push_back(std::move(*e));
    return true;
  };
  uint32_t pos = 4;
  for (const auto& [type, body] : std::vector<std::pair<uint8_t, std::string>>{{19, docs_table_map(42)}, {39, rows}, {16, xid}}) {
    const std::string event = make_event(type, body, pos + static_cast<uint32_t>(19 + body.size() + 4));
    pos += static_cast<uint32_t>(event.size());
    std::string error;
    ASSERT_EQ(builder.on_event(event, emit, error), BinlogChangeBuilder::Outcome::Continue) << error;
  }
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events) {
    EXPECT_EQ(e.op, Op::Update);
    ASSERT_TRUE(e.before && e.after);
    ASSERT_EQ(e.after->size(), 2u);
    EXPECT_EQ(e.table->columns, (std::vector<std::string>{"id", "doc"}));
  }
  EXPECT_EQ((*events[0].before)[1], Value(Json{decoded(before_doc)}));
  EXPECT_EQ(*events[0].after, (Row{Value(int64_t{1}), Value(Json{expected})}));
  // The rebuilt document reads exactly like the same document logged whole.
  EXPECT_EQ(expected, decoded(R"({"price": {"currency": "EUR", "amount": 4}, "tags": ["a", "b", "c"], "in stock": true})"));
  EXPECT_EQ(*events[1].after, (Row{Value(int64_t{2}), Value(Unavailable{})}));
  EXPECT_EQ(*events[2].after, (Row{Value(int64_t{3}), Value(Unavailable{})}));
  EXPECT_TRUE(events[2].resume_position.has_value());
}

}  // namespace
}  // namespace tidemark::mysql
