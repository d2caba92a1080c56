#include "source/mysql/json_diff_apply.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

namespace tidemark::mysql {

namespace {

using nlohmann::json;

// Numbers with a fraction or an exponent (and integers too large for 64 bits) are kept as the text they
// were written as, in a binary value with this subtype: JSON text never yields binary values, so the
// marker cannot collide with a document's own data.
constexpr std::uint64_t kRawNumber = 0x4e;

// Deeper than any document MySQL stores (its limit is 100 levels) plus a diff path.
constexpr size_t kMaxDocumentDepth = 1000;

// Builds a json DOM like nlohmann's own parser, except for the raw number text above.
class DomBuilder {
 public:
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  json root;
  std::string error;

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t, const string_t& text) {
    return add(json::binary(std::vector<std::uint8_t>(text.begin(), text.end()), kRawNumber));
  }
  bool string(string_t& v) { return add(json(std::move(v))); }
  bool binary(binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool key(string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception&) {
    error = "invalid JSON at byte " + std::to_string(position > 0 ? position - 1 : 0) + " near '" + token + "'";
    return false;
  }

 private:
  // The slot of the next value: the root, a new array element, or the member named by the last key.
  json* add(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool open(json&& container) {
    if (stack_.size() >= kMaxDocumentDepth) {
      error = "JSON nested deeper than " + std::to_string(kMaxDocumentDepth) + " levels";
      return false;
    }
    stack_.push_back(add(std::move(container)));
    return true;
  }

  std::vector<json*> stack_;  // open containers; each is the last value of its parent, so pointers stay valid
  string_t key_;
};

bool parse_document(std::string_view text, json& out, std::string& error) {
  DomBuilder builder;
  const bool ok = json::sax_parse(text, &builder);
  if (!ok) {
    error = builder.error.empty() ? std::string("invalid JSON") : builder.error;
    return false;
  }
  out = std::move(builder.root);
  return true;
}


// MySQL's binary JSON key order (Json_key_comparator): length first, then bytes.
bool key_less(const std::string* a, const std::string* b) {
  if (a->size() != b->size()) return a->size() < b->size();
  return *a < *b;  // char_traits<char>::compare compares as unsigned char
}

void render(const json& j, std::string& out) {
  switch (j.type()) {
    case json::value_t::object: {
      std::vector<std::pair<const std::string*, const json*>> members;
      members.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it) members.emplace_back(&it.key(), &it.value());
      std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return key_less(a.first, b.first); });
      out.push_back('{');
      for (size_t i = 0; i < members.size(); ++i) {
        if (i > 0) out += ", ";
        append_json_string(out, *members[i].first);
        out += ": ";
        render(*members[i].second, out);
      }
      out.push_back('}');
      return;
    }
    case json::value_t::array: {
      out.push_back('[');
      for (size_t i = 0; i < j.size(); ++i) {
        if (i > 0) out += ", ";
        render(j[i], out);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::string: append_json_string(out, j.get_ref<const std::string&>()); return;
    case json::value_t::binary: {
      const auto& bytes = j.get_binary();
      out.append(bytes.begin(), bytes.end());
      return;
    }
    case json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case json::value_t::number_integer: out += std::to_string(j.get<json::number_integer_t>()); return;
    case json::value_t::number_unsigned: out += std::to_string(j.get<json::number_unsigned_t>()); return;
    case json::value_t::number_float: out += j.dump(); return;  // not produced by the parser above
    case json::value_t::null:
    case json::value_t::discarded: out += "null"; return;
  }
}

// ---------------------------------------------------------------------------------------------------
// Paths

bool is_path_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// ECMAScript IdentifierName, as MySQL checks an unquoted member name: letters, '$', '_' first; digits
// after. Non-ASCII bytes are accepted as letters (MySQL classifies code points; a server only writes
// names it accepted, so the difference cannot show on a server's diffs).
bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '$' || c == '_' || c >= 0x80;
    if (letter) continue;
    if (i > 0 && c >= '0' && c <= '9') continue;
    return false;
  }
  return true;
}

// A double-quoted JSON string → its value.
bool unquote(std::string_view quoted, std::string& out) {
  const json v = json::parse(quoted.begin(), quoted.end(), nullptr, false);
  if (!v.is_string()) return false;
  out = v.get<std::string>();
  return true;
}

class PathParser {
 public:
  explicit PathParser(std::string_view path) : p_(path) {}

  bool parse(std::vector<JsonPathLeg>& legs, std::string& error) {
    legs.clear();
    skip_space();
    if (at_end() || p_[pos_] != '$') return fail("a path starts with '$'", error);
    ++pos_;
    skip_space();
    while (!at_end()) {
      JsonPathLeg leg;
      const char c = p_[pos_];
      if (c == '.') {
        if (!member(leg, error)) return false;
      } else if (c == '[') {
        if (!cell(leg, error)) return false;
      } else if (c == '*') {
        return fail("'**' addresses several values", error);
      } else {
        return fail("expected '.' or '['", error);
      }
      legs.push_back(std::move(leg));
      skip_space();
    }
    return true;
  }

 private:
  bool at_end() const { return pos_ >= p_.size(); }
  void skip_space() {
    while (!at_end() && is_path_space(p_[pos_])) ++pos_;
  }
  bool fail(const std::string& why, std::string& error) const {
    error = "bad JSON path '" + std::string(p_) + "' at byte " + std::to_string(pos_) + ": " + why;
    return false;
  }

  bool member(JsonPathLeg& leg, std::string& error) {
    ++pos_;  // '.'
    skip_space();
    if (at_end()) return fail("member name missing", error);
    if (p_[pos_] == '*') return fail("'.*' addresses several values", error);
    leg.kind = JsonPathLeg::Kind::Member;
    const size_t start = pos_;
    if (p_[pos_] == '"') {
      ++pos_;
      bool closed = false;
      while (!at_end()) {
        const char c = p_[pos_++];
        if (c == '\\') {
          ++pos_;
        } else if (c == '"') {
          closed = true;
          break;
        }
      }
      if (!closed || pos_ > p_.size()) {
        pos_ = start;
        return fail("unterminated quoted member name", error);
      }
      if (!unquote(p_.substr(start, pos_ - start), leg.member)) {
        pos_ = start;
        return fail("invalid quoted member name", error);
      }
      return true;
    }
    while (!at_end() && !is_path_space(p_[pos_]) && p_[pos_] != '[' && p_[pos_] != '.' && p_[pos_] != '*') ++pos_;
    // An unquoted name may hold JSON escapes (\u0041): read it as the JSON string it would be quoted.
    const std::string quoted = "\"" + std::string(p_.substr(start, pos_ - start)) + "\"";
    if (!unquote(quoted, leg.member) || !is_identifier(leg.member)) {
      pos_ = start;
      return fail("an unquoted member name must be an ECMAScript identifier (quote it: .\"name\")", error);
    }
    return true;
  }

  bool index(uint32_t& value, bool& from_end, std::string& error) {
    from_end = false;
    value = 0;
    if (p_.substr(pos_, 4) == "last") {
      pos_ += 4;
      from_end = true;
      skip_space();
      if (at_end() || p_[pos_] != '-') return true;
      ++pos_;
      skip_space();
    }
    if (at_end() || p_[pos_] < '0' || p_[pos_] > '9') return fail("array index expected", error);
    uint64_t v = 0;
    while (!at_end() && p_[pos_] >= '0' && p_[pos_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(p_[pos_++] - '0');
      if (v > std::numeric_limits<uint32_t>::max()) return fail("array index too large", error);
    }
    value = static_cast<uint32_t>(v);
    return true;
  }

  bool cell(JsonPathLeg& leg, std::string& error) {
    ++pos_;  // '['
    skip_space();
    if (at_end()) return fail("unterminated array index", error);
    if (p_[pos_] == '*') return fail("'[*]' addresses several values", error);
    leg.kind = JsonPathLeg::Kind::ArrayCell;
    if (!index(leg.index, leg.from_end, error)) return false;
    const bool spaced = !at_end() && is_path_space(p_[pos_]);
    skip_space();
    if (spaced && p_.substr(pos_, 2) == "to" && pos_ + 2 < p_.size() && is_path_space(p_[pos_ + 2]))
      return fail("an array range addresses several values", error);
    if (at_end() || p_[pos_] != ']') return fail("expected ']'", error);
    ++pos_;
    return true;
  }

  std::string_view p_;
  size_t pos_ = 0;
};

// MySQL's Json_array_index: where an index points in an array of `size` elements, and whether it names an
// existing element. Counting from the start, the position is clamped to the size; from the end, an index
// past the start is position 0.
struct ArrayIndex {
  size_t position;
  bool within_bounds;
};

ArrayIndex array_index(const JsonPathLeg& leg, size_t size) {
  const size_t i = leg.index;
  if (leg.from_end) return {i < size ? size - i - 1 : 0, i < size};
  return {std::min(i, size), i < size};
}

std::string leg_text(const JsonPathLeg& leg) {
  if (leg.kind == JsonPathLeg::Kind::Member) {
    std::string out = ".";
    append_json_string(out, leg.member);
    return out;
  }
  if (!leg.from_end) return "[" + std::to_string(leg.index) + "]";
  return leg.index == 0 ? std::string("[last]") : "[last-" + std::to_string(leg.index) + "]";
}

// seek_exact_path: the value at legs[0, count), or null.
json* seek(json& doc, const std::vector<JsonPathLeg>& legs, size_t count, std::string& why) {
  json* at = &doc;
  for (size_t i = 0; i < count; ++i) {
    const JsonPathLeg& leg = legs[i];
    if (at->is_array() && leg.kind == JsonPathLeg::Kind::ArrayCell) {
      const ArrayIndex idx = array_index(leg, at->size());
      if (!idx.within_bounds) {
        why = "array index " + leg_text(leg) + " is out of bounds (" + std::to_string(at->size()) + " elements)";
        return nullptr;
      }
      at = &(*at)[idx.position];
    } else if (at->is_object() && leg.kind == JsonPathLeg::Kind::Member) {
      auto found = at->find(leg.member);
      if (found == at->end()) {
        why = "no member " + leg_text(leg);
        return nullptr;
      }
      at = &*found;
    } else {
      why = std::string("leg ") + leg_text(leg) + " applied to " +
            (at->is_object() ? "an object" : at->is_array() ? "an array" : "a scalar");
      return nullptr;
    }
  }
  return at;
}

bool apply_one(json& doc, const JsonDiff& diff, std::string& why) {
  std::vector<JsonPathLeg> legs;
  if (!parse_json_path(diff.path, legs, why)) return false;
  if (legs.empty()) {
    why = "the root cannot be the target of a diff";
    return false;
  }
  json value;
  if (diff.op != JsonDiffOp::Remove) {
    if (!parse_document(diff.value, value, why)) {
      why = "value: " + why;
      return false;
    }
  }
  switch (diff.op) {
    case JsonDiffOp::Replace: {
      json* old = seek(doc, legs, legs.size(), why);
      if (old == nullptr) return false;
      *old = std::move(value);
      return true;
    }
    case JsonDiffOp::Insert: {
      json* parent = seek(doc, legs, legs.size() - 1, why);
      if (parent == nullptr) return false;
      const JsonPathLeg& last = legs.back();
      if (parent->is_object() && last.kind == JsonPathLeg::Kind::Member) {
        if (parent->contains(last.member)) {
          why = "member " + leg_text(last) + " already exists";
          return false;
        }
        (*parent)[last.member] = std::move(value);
        return true;
      }
      if (parent->is_array() && last.kind == JsonPathLeg::Kind::ArrayCell) {
        const ArrayIndex idx = array_index(last, parent->size());
        parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(idx.position), std::move(value));
        return true;
      }
      why = std::string("cannot insert ") + leg_text(last) + " into " +
            (parent->is_object() ? "an object" : parent->is_array() ? "an array" : "a scalar");
      return false;
    }
    case JsonDiffOp::Remove: {
      json* parent = seek(doc, legs, legs.size() - 1, why);
      if (parent == nullptr) return false;
      const JsonPathLeg& last = legs.back();
      if (parent->is_object() && last.kind == JsonPathLeg::Kind::Member) {
        if (parent->erase(last.member) == 0) {
          why = "no member " + leg_text(last);
          return false;
        }
        return true;
      }
      if (parent->is_array() && last.kind == JsonPathLeg::Kind::ArrayCell) {
        const ArrayIndex idx = array_index(last, parent->size());
        if (!idx.within_bounds) {
          why = "array index " + leg_text(last) + " is out of bounds (" + std::to_string(parent->size()) + " elements)";
          return false;
        }
        parent->erase(idx.position);
        return true;
      }
      why = std::string("cannot remove ") + leg_text(last) + " from " +
            (parent->is_object() ? "an object" : parent->is_array() ? "an array" : "a scalar");
      return false;
    }
  }
  why = "unknown operation";
  return false;
}

}  // namespace

bool parse_json_path(std::string_view path, std::vector<JsonPathLeg>& legs, std::string& error) {
  try {
    return PathParser(path).parse(legs, error);
  } catch (const std::exception& e) {
    error = std::string("JSON path: ") + e.what();
    return false;
  }
}

bool apply_json_diffs(std::string_view document, const std::vector<JsonDiff>& diffs, std::string& out,
                      std::string& error) {
  try {
    json doc;
    std::string why;
    if (!parse_document(document, doc, why)) {
      error = "before document: " + why;
      return false;
    }
    for (size_t i = 0; i < diffs.size(); ++i) {
      if (!apply_one(doc, diffs[i], why)) {
        error = "JSON diff " + std::to_string(i + 1) + " of " + std::to_string(diffs.size()) + " (" +
                std::string(json_diff_op_name(diffs[i].op)) + " " + diffs[i].path + "): " + why;
        return false;
      }
    }
    std::string text;
    render(doc, text);
    out = std::move(text);
    return true;
  } catch (const std::exception& e) {
    error = std::string("applying JSON diffs: ") + e.what();
    return false;
  }
}

bool normalize_mysql_json_text(std::string_view document, std::string& out, std::string& error) {
  try {
    json doc;
    if (!parse_document(document, doc, error)) return false;
    std::string text;
    render(doc, text);
    out = std::move(text);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

}  // namespace tidemark::mysql
