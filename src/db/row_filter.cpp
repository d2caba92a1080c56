#include "db/row_filter.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace tidemark {

namespace {

// Words of comparisons, boolean logic, CASE, casts, typed literals and intervals (both databases).
constexpr std::array kKeywords = {
    "and", "or", "not", "xor", "is", "null", "true", "false", "unknown", "in", "between", "like", "ilike",
    "escape", "case", "when", "then", "else", "end", "cast", "as", "div", "mod", "interval", "at", "time",
    "zone", "with", "without", "current_date", "current_time", "current_timestamp", "localtime",
    "localtimestamp", "year", "quarter", "month", "week", "day", "hour", "minute", "second", "microsecond",
    "date", "datetime", "timestamp", "timestamptz", "int", "integer", "bigint", "smallint", "numeric",
    "decimal", "real", "float", "double", "precision", "text", "varchar", "char", "character", "varying",
    "boolean", "bool", "uuid", "json", "jsonb", "signed", "unsigned", "binary"};

// Pure functions: no side effects, no access to other relations, files or server state.
constexpr std::array kFunctions = {
    "lower", "upper", "length", "char_length", "character_length", "octet_length", "coalesce", "ifnull",
    "nullif", "abs", "round", "floor", "ceil", "ceiling", "mod", "sign", "sqrt", "power", "substr",
    "substring", "trim", "ltrim", "rtrim", "left", "right", "concat", "replace", "greatest", "least", "now",
    "date", "date_trunc", "date_part", "to_char", "to_date", "to_timestamp", "year", "month", "day", "hour",
    "minute", "second", "dayofweek", "date_add", "date_sub", "datediff", "md5", "hex", "cast",
    "json_extract", "json_unquote", "concat_ws", "split_part", "substring_index", "strpos", "position", "locate",
    "instr"};

// Words that start a subquery, a set operation or another statement.
constexpr std::array kStatementWords = {
    "select", "union", "intersect", "except", "from", "with", "values", "table", "into", "join", "lateral",
    "returning", "limit", "offset", "order", "group", "having", "window", "for", "lock", "exists", "insert",
    "update", "delete", "create", "drop", "alter", "grant", "copy", "execute", "call", "do", "set"};

template <size_t N>
bool listed(const std::array<const char*, N>& words, const std::string& word) {
  return std::any_of(words.begin(), words.end(), [&](const char* w) { return word == w; });
}

std::string lowered(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Checker {
 public:
  Checker(std::string_view where, const std::vector<std::string>& columns, const SqlDialect& dialect)
      : in_(where), columns_(columns), dialect_(dialect) {}

  std::optional<std::string> run() {
    if (in_.size() > kMaxRowFilterLength)
      return "the condition is " + std::to_string(in_.size()) + " bytes; at most " +
             std::to_string(kMaxRowFilterLength) + " are allowed";
    bool any = false;
    int depth = 0;
    while (pos_ < in_.size()) {
      const char c = in_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        continue;
      }
      any = true;
      std::optional<std::string> error;
      if (c == ';') {
        error = "it must be one expression: ';' is not allowed";
      } else if (c == '\\') {
        error = "backslashes are not allowed (their meaning depends on server settings)";
      } else if (c == '$') {
        error = "'$' is not allowed (parameters and dollar quoting)";
      } else if (c == '#' || (c == '-' && next() == '-') || (c == '/' && next() == '*')) {
        error = "comments are not allowed";
      } else if (c == '\'') {
        error = string_literal();
      } else if (c == dialect_.identifier_quote) {
        error = quoted_name();
      } else if (c == '"' || c == '`') {
        error = std::string("use ' for strings and ") + dialect_.identifier_quote + " to quote column names";
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && std::isdigit(static_cast<unsigned char>(next())))) {
        number();
      } else if (word_start(c)) {
        error = word();
      } else if (c == '(') {
        ++depth;
        ++pos_;
      } else if (c == ')') {
        if (--depth < 0) error = "unbalanced parentheses: ')' closes more than was opened";
        ++pos_;
      } else if (c == '.') {
        error = "qualified names are not allowed: name the column alone";
      } else if (std::string_view("=<>!+-*/%|:,~").find(c) != std::string_view::npos) {
        error = operator_token();
      } else {
        error = static_cast<unsigned char>(c) >= 0x80
                    ? std::string("names with non-ASCII letters must be quoted with ") + dialect_.identifier_quote
                    : std::string("the character '") + c + "' is not allowed";
      }
      if (error) return *error + " (at offset " + std::to_string(pos_) + ")";
    }
    if (!any) return "the condition is empty";
    if (depth != 0) return "unbalanced parentheses: " + std::to_string(depth) + " not closed";
    return std::nullopt;
  }

 private:
  char next() const { return pos_ + 1 < in_.size() ? in_[pos_ + 1] : '\0'; }

  // Digits, a fraction and an exponent, or 0x and hex digits; never the letters after them, so `1union`
  // (which MySQL reads as 1 UNION) goes on to the word check.
  void number() {
    const auto digit = [&](size_t at) { return at < in_.size() && std::isdigit(static_cast<unsigned char>(in_[at])); };
    if (in_[pos_] == '0' && (next() == 'x' || next() == 'X')) {
      pos_ += 2;
      while (pos_ < in_.size() && std::isxdigit(static_cast<unsigned char>(in_[pos_]))) ++pos_;
      return;
    }
    while (digit(pos_) || (pos_ < in_.size() && in_[pos_] == '.')) ++pos_;
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      size_t at = pos_ + 1;
      if (at < in_.size() && (in_[at] == '+' || in_[at] == '-')) ++at;
      if (digit(at)) {
        pos_ = at;
        while (digit(pos_)) ++pos_;
      }
    }
  }

  std::optional<std::string> string_literal() {
    for (++pos_; pos_ < in_.size(); ++pos_) {
      if (in_[pos_] == '\\') return "backslashes are not allowed (their meaning depends on server settings)";
      if (in_[pos_] != '\'') continue;
      if (next() == '\'') {
        ++pos_;
        continue;
      }
      ++pos_;
      return std::nullopt;
    }
    return "a string is not closed";
  }

  std::optional<std::string> quoted_name() {
    const char q = dialect_.identifier_quote;
    std::string name;
    for (++pos_; pos_ < in_.size(); ++pos_) {
      if (in_[pos_] != q) {
        name += in_[pos_];
        continue;
      }
      if (next() == q) {
        name += q;
        ++pos_;
        continue;
      }
      ++pos_;
      return column(name, dialect_.quoted_names_ignore_case);
    }
    return "a quoted name is not closed";
  }

  std::optional<std::string> column(const std::string& name, bool ignore_case) const {
    const bool found = std::any_of(columns_.begin(), columns_.end(), [&](const std::string& c) {
      return ignore_case ? lowered(c) == lowered(name) : c == name;
    });
    if (found) return std::nullopt;
    return "'" + name.substr(0, 64) + "' is not a column of the table";
  }

  std::optional<std::string> word() {
    const size_t start = pos_;
    while (pos_ < in_.size() && word_char(in_[pos_])) ++pos_;
    const std::string text(in_.substr(start, pos_ - start));
    const std::string lower = lowered(text);
    // A prefixed string: E'..', X'..', B'..', N'..' (backslashes inside are refused anyway).
    if (pos_ < in_.size() && in_[pos_] == '\'' && text.size() == 1 && std::string_view("exbn").find(lower[0]) != std::string_view::npos)
      return std::nullopt;
    size_t after = pos_;
    while (after < in_.size() && std::isspace(static_cast<unsigned char>(in_[after]))) ++after;
    const char follower = after < in_.size() ? in_[after] : '\0';
    if (listed(kStatementWords, lower)) return "subqueries, set operators and other statements are not allowed ('" + text + "')";
    if (follower == '.') return "qualified names are not allowed: name the column alone ('" + text.substr(0, 64) + ".')";
    if (follower == '(') {
      if (listed(kFunctions, lower) || listed(kKeywords, lower)) return std::nullopt;
      return "function " + text.substr(0, 64) + " is not allowed; a condition may call only: " + function_list();
    }
    if (listed(kKeywords, lower)) return std::nullopt;
    const std::string name = dialect_.fold_unquoted_to_lower ? lower : text;
    if (auto error = column(name, !dialect_.fold_unquoted_to_lower)) {
      return *error + (dialect_.fold_unquoted_to_lower && name != text
                           ? std::string(" (unquoted names are folded to lower case; quote it: ") +
                                 dialect_.identifier_quote + text.substr(0, 64) + dialect_.identifier_quote + ")"
                           : "");
    }
    return std::nullopt;
  }

  std::optional<std::string> operator_token() {
    const char c = in_[pos_];
    const char n = next();
    const std::string two{c, n};
    for (const char* op : {"<=", ">=", "<>", "!=", "||", "::"}) {
      if (two == op) {
        pos_ += 2;
        return std::nullopt;
      }
    }
    if (c == '!' || c == '|' || c == ':') return std::string("the operator '") + c + "' is not allowed";
    ++pos_;
    return std::nullopt;
  }

  static std::string function_list() {
    std::string out;
    for (const char* f : kFunctions) out += (out.empty() ? "" : ", ") + std::string(f);
    return out;
  }

  std::string_view in_;
  const std::vector<std::string>& columns_;
  const SqlDialect& dialect_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<std::string> check_row_filter(std::string_view where, const std::vector<std::string>& columns,
                                            const SqlDialect& dialect) {
  return Checker(where, columns, dialect).run();
}

}  // namespace tidemark
