#include "source/mysql/mysql_json_binary.hpp"

#include <bit>
#include <charconv>
#include <cstdio>

#include "source/mysql/binlog_cursor.hpp"
#include "source/mysql/charset.hpp"
#include "source/mysql/mysql_decimal.hpp"

namespace tidemark::mysql {

namespace {

enum : uint8_t {
  kSmallObject = 0x00,
  kLargeObject = 0x01,
  kSmallArray = 0x02,
  kLargeArray = 0x03,
  kLiteral = 0x04,
  kInt16 = 0x05,
  kUint16 = 0x06,
  kInt32 = 0x07,
  kUint32 = 0x08,
  kInt64 = 0x09,
  kUint64 = 0x0a,
  kDouble = 0x0b,
  kString = 0x0c,
  kOpaque = 0x0f,
};

constexpr int kMaxDepth = 150;

// MySQL field types that opaque values carry.
constexpr uint8_t kFieldNewDecimal = 246, kFieldDate = 10, kFieldTime = 11, kFieldDateTime = 12, kFieldTimestamp = 7;


void append_base64(std::string& out, std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8 |
                       static_cast<unsigned char>(data[i + 2]);
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
  }
  if (i + 1 == data.size()) {
    const uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == data.size()) {
    const uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
}

void append_double(std::string& out, double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
  out += text;
  if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";  // MySQL prints 1.0 as 1.0
}

class Reader {
 public:
  explicit Reader(std::string_view doc) : doc_(doc) {}

  bool value(uint8_t type, size_t pos, size_t end, int depth, std::string& out) {
    if (depth > kMaxDepth) return fail(pos, "nesting deeper than " + std::to_string(kMaxDepth));
    switch (type) {
      case kSmallObject: return container(pos, end, false, true, depth, out);
      case kLargeObject: return container(pos, end, true, true, depth, out);
      case kSmallArray: return container(pos, end, false, false, depth, out);
      case kLargeArray: return container(pos, end, true, false, depth, out);
      case kLiteral: {
        uint64_t v = 0;
        if (!uint_at(pos, 1, end, v)) return false;
        return literal(pos, v, out);
      }
      case kInt16:
      case kUint16:
      case kInt32:
      case kUint32:
      case kInt64:
      case kUint64: {
        const size_t n = type <= kUint16 ? 2 : type <= kUint32 ? 4 : 8;
        uint64_t v = 0;
        if (!uint_at(pos, n, end, v)) return false;
        append_int(type, v, out);
        return true;
      }
      case kDouble: {
        uint64_t v = 0;
        if (!uint_at(pos, 8, end, v)) return false;
        append_double(out, std::bit_cast<double>(v));
        return true;
      }
      case kString: {
        uint64_t len = 0;
        size_t p = pos;
        if (!varlen(p, end, len)) return false;
        if (len > end - p) return fail(p, "string of " + std::to_string(len) + " bytes past the end");
        append_json_string(out, doc_.substr(p, static_cast<size_t>(len)));
        return true;
      }
      case kOpaque: {
        uint64_t field_type = 0, len = 0;
        size_t p = pos;
        if (!uint_at(p, 1, end, field_type)) return false;
        ++p;
        if (!varlen(p, end, len)) return false;
        if (len > end - p) return fail(p, "opaque value of " + std::to_string(len) + " bytes past the end");
        return opaque(static_cast<uint8_t>(field_type), p, doc_.substr(p, static_cast<size_t>(len)), out);
      }
      default: return fail(pos, "unknown value type 0x" + hex(type));
    }
  }

  const std::string& error() const { return error_; }

 private:
  static std::string hex(unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%02x", v);
    return buf;
  }
  bool fail(size_t pos, std::string message) {
    if (error_.empty()) error_ = "at byte " + std::to_string(pos) + ": " + message;
    return false;
  }
  bool uint_at(size_t pos, size_t n, size_t end, uint64_t& out) {
    if (pos > end || n > end - pos) return fail(pos, "truncated: needs " + std::to_string(n) + " bytes");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(doc_[pos + i])) << (8 * i);
    out = v;
    return true;
  }
  bool varlen(size_t& pos, size_t end, uint64_t& out) {
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) {
      if (pos >= end) return fail(pos, "truncated length");
      const auto b = static_cast<unsigned char>(doc_[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        out = v;
        return true;
      }
    }
    return fail(pos, "length longer than 5 bytes");
  }
  bool literal(size_t pos, uint64_t v, std::string& out) {
    switch (v) {
      case 0: out += "null"; return true;
      case 1: out += "true"; return true;
      case 2: out += "false"; return true;
      default: return fail(pos, "unknown literal " + std::to_string(v));
    }
  }
  static void append_int(uint8_t type, uint64_t v, std::string& out) {
    switch (type) {
      case kInt16: out += std::to_string(static_cast<int16_t>(v)); break;
      case kInt32: out += std::to_string(static_cast<int32_t>(v)); break;
      case kInt64: out += std::to_string(static_cast<int64_t>(v)); break;
      default: out += std::to_string(v); break;
    }
  }

  // Objects and arrays: count, size, [key entries], value entries, then keys and values. Offsets are from
  // `pos` (the first byte after the type byte).
  bool container(size_t pos, size_t end, bool large, bool object, int depth, std::string& out) {
    const size_t w = large ? 4 : 2;
    uint64_t count = 0, size = 0;
    if (!uint_at(pos, w, end, count) || !uint_at(pos + w, w, end, size)) return false;
    if (size > end - pos) return fail(pos, "container size " + std::to_string(size) + " past the end");
    const size_t cend = pos + static_cast<size_t>(size);
    const size_t key_entry = w + 2;
    const size_t value_entry = 1 + w;
    const size_t header = 2 * w;
    const uint64_t entries_bytes = count * ((object ? key_entry : 0) + value_entry);
    if (entries_bytes > size - std::min<uint64_t>(size, header)) return fail(pos, "element count " + std::to_string(count) + " too large");
    out.push_back(object ? '{' : '[');
    for (uint64_t i = 0; i < count; ++i) {
      if (i > 0) out += ", ";
      if (object) {
        const size_t ke = pos + header + static_cast<size_t>(i) * key_entry;
        uint64_t koff = 0, klen = 0;
        if (!uint_at(ke, w, cend, koff) || !uint_at(ke + w, 2, cend, klen)) return false;
        if (koff > size || klen > size - koff) return fail(ke, "key past the end of its object");
        append_json_string(out, doc_.substr(pos + static_cast<size_t>(koff), static_cast<size_t>(klen)));
        out += ": ";
      }
      const size_t ve = pos + header + static_cast<size_t>(object ? count * key_entry : 0) + static_cast<size_t>(i) * value_entry;
      uint64_t vtype = 0;
      if (!uint_at(ve, 1, cend, vtype)) return false;
      const bool inlined = vtype == kLiteral || vtype == kInt16 || vtype == kUint16 ||
                           (large && (vtype == kInt32 || vtype == kUint32));
      if (inlined) {
        if (!value(static_cast<uint8_t>(vtype), ve + 1, ve + 1 + w, depth + 1, out)) return false;
      } else {
        uint64_t voff = 0;
        if (!uint_at(ve + 1, w, cend, voff)) return false;
        if (voff >= size) return fail(ve, "value offset " + std::to_string(voff) + " past the end of its container");
        if (!value(static_cast<uint8_t>(vtype), pos + static_cast<size_t>(voff), cend, depth + 1, out)) return false;
      }
    }
    out.push_back(object ? '}' : ']');
    return true;
  }

  bool opaque(uint8_t field_type, size_t pos, std::string_view data, std::string& out) {
    if (field_type == kFieldNewDecimal && data.size() >= 2) {
      const int precision = static_cast<unsigned char>(data[0]);
      const int scale = static_cast<unsigned char>(data[1]);
      BinlogCursor c(data.substr(2), pos + 2);
      std::string text;
      if (!read_mysql_decimal(c, precision, scale, text)) return fail(pos, "opaque DECIMAL: " + c.failure()->message);
      out += text;
      return true;
    }
    if ((field_type == kFieldDate || field_type == kFieldTime || field_type == kFieldDateTime ||
         field_type == kFieldTimestamp) && data.size() >= 8) {
      uint64_t raw = 0;
      for (size_t i = 0; i < 8; ++i) raw |= static_cast<uint64_t>(static_cast<unsigned char>(data[i])) << (8 * i);
      const auto packed = static_cast<int64_t>(raw);
      const bool negative = packed < 0;
      const uint64_t a = negative ? 0 - raw : raw;
      const uint64_t frac = a & 0xFFFFFF;
      const uint64_t intpart = a >> 24;
      char buf[64];
      if (field_type == kFieldTime) {
        const uint64_t hms = intpart;
        std::snprintf(buf, sizeof buf, "\"%s%02llu:%02llu:%02llu.%06llu\"", negative ? "-" : "",
                      static_cast<unsigned long long>((hms >> 12) & 0x3FF), static_cast<unsigned long long>((hms >> 6) & 0x3F),
                      static_cast<unsigned long long>(hms & 0x3F), static_cast<unsigned long long>(frac));
      } else {
        const uint64_t ymd = intpart >> 17, ym = ymd >> 5, hms = intpart & 0x1FFFF;
        if (field_type == kFieldDate) {
          std::snprintf(buf, sizeof buf, "\"%04llu-%02llu-%02llu\"", static_cast<unsigned long long>(ym / 13),
                        static_cast<unsigned long long>(ym % 13), static_cast<unsigned long long>(ymd & 0x1F));
        } else {
          std::snprintf(buf, sizeof buf, "\"%04llu-%02llu-%02llu %02llu:%02llu:%02llu.%06llu\"",
                        static_cast<unsigned long long>(ym / 13), static_cast<unsigned long long>(ym % 13),
                        static_cast<unsigned long long>(ymd & 0x1F), static_cast<unsigned long long>(hms >> 12),
                        static_cast<unsigned long long>((hms >> 6) & 0x3F), static_cast<unsigned long long>(hms & 0x3F),
                        static_cast<unsigned long long>(frac));
        }
      }
      out += buf;
      return true;
    }
    out += "\"base64:type" + std::to_string(field_type) + ":";
    append_base64(out, data);
    out += "\"";
    return true;
  }

  std::string_view doc_;
  std::string error_;
};

}  // namespace

bool json_binary_to_text(std::string_view doc, std::string& out, std::string& error) {
  out.clear();
  if (doc.empty()) {
    out = "null";
    return true;
  }
  Reader r(doc);
  if (!r.value(static_cast<uint8_t>(doc[0]), 1, doc.size(), 0, out)) {
    error = r.error();
    out.clear();
    return false;
  }
  return true;
}

std::string_view json_diff_op_name(JsonDiffOp op) {
  switch (op) {
    case JsonDiffOp::Replace: return "replace";
    case JsonDiffOp::Insert: return "insert";
    case JsonDiffOp::Remove: return "remove";
  }
  return "unknown";
}

bool decode_json_diffs(std::string_view bytes, std::vector<JsonDiff>& out, std::string& error) {
  BinlogCursor c(bytes);
  std::vector<JsonDiff> diffs;
  while (!c.at_end()) {
    const size_t start = c.offset();
    uint8_t op = 0;
    std::string_view path, value;
    if (!c.read_u8(op, "JSON diff operation")) break;
    if (op > 2) {
      c.fail("unknown JSON diff operation " + std::to_string(op) + " at byte " + std::to_string(start));
      break;
    }
    if (!c.read_packed_prefixed(path, "JSON diff path")) break;
    JsonDiff d{static_cast<JsonDiffOp>(op), std::string(path), {}};
    if (d.op != JsonDiffOp::Remove) {
      if (!c.read_packed_prefixed(value, "JSON diff value")) break;
      std::string err;
      if (!json_binary_to_text(value, d.value, err)) {
        c.fail("JSON diff value at byte " + std::to_string(start) + ": " + err);
        break;
      }
    }
    diffs.push_back(std::move(d));
  }
  if (c.failed()) {
    error = "at byte " + std::to_string(c.failure()->offset) + ": " + c.failure()->message;
    return false;
  }
  out = std::move(diffs);
  return true;
}

void append_json_string(std::string& out, std::string_view raw) {
  std::string s;
  append_valid_utf8(s, raw);
  out.push_back('"');
  for (char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

}  // namespace tidemark::mysql
