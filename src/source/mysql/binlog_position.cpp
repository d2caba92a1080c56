#include "source/mysql/binlog_position.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tidemark::mysql {

namespace {

constexpr std::string_view kPrefix = "binlog:";

template <typename T>
bool parse_number(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool valid_uuid_text(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// Sorts closed intervals and merges overlapping or adjacent ones.
void normalize(std::vector<std::pair<uint64_t, uint64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& iv : intervals) {
    if (!merged.empty() && iv.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, iv.second);
    else merged.push_back(iv);
  }
  intervals = std::move(merged);
}

}  // namespace

std::optional<MariaGtidState> MariaGtidState::parse(std::string_view text) {
  MariaGtidState state;
  text = trim(text);
  if (text.empty()) return state;
  for (std::string_view item : split(text, ',')) {
    const auto parts = split(trim(item), '-');
    uint32_t domain = 0, server = 0;
    uint64_t sequence = 0;
    if (parts.size() != 3 || !parse_number(parts[0], domain) || !parse_number(parts[1], server) ||
        !parse_number(parts[2], sequence))
      return std::nullopt;
    if (state.domains_.count(domain)) return std::nullopt;
    state.update(domain, server, sequence);
  }
  return state;
}

std::string MariaGtidState::to_string() const {
  std::string out;
  for (const auto& [domain, entry] : domains_) {
    if (!out.empty()) out.push_back(',');
    out += std::to_string(domain) + "-" + std::to_string(entry.server_id) + "-" + std::to_string(entry.sequence);
  }
  return out;
}

std::optional<MysqlGtidSet> MysqlGtidSet::parse(std::string_view text) {
  MysqlGtidSet set;
  text = trim(text);
  if (text.empty()) return set;
  for (std::string_view item : split(text, ',')) {
    const auto parts = split(trim(item), ':');
    if (parts.size() < 2 || !valid_uuid_text(parts[0])) return std::nullopt;
    std::string sid(parts[0]);
    std::transform(sid.begin(), sid.end(), sid.begin(), [](unsigned char c) { return std::tolower(c); });
    for (size_t i = 1; i < parts.size(); ++i) {
      const auto range = split(parts[i], '-');
      uint64_t first = 0, last = 0;
      if (range.size() == 1) {
        if (!parse_number(range[0], first)) return std::nullopt;
        last = first;
      } else if (range.size() != 2 || !parse_number(range[0], first) || !parse_number(range[1], last)) {
        return std::nullopt;
      }
      if (first == 0 || last < first) return std::nullopt;
      auto& intervals = set.sets_[sid];
      intervals.emplace_back(first, last);
      normalize(intervals);
    }
  }
  return set;
}

void MysqlGtidSet::add(const std::string& sid, uint64_t gno) {
  auto& intervals = sets_[sid];
  // Transactions of one source usually arrive in order: extend the last interval.
  if (!intervals.empty() && intervals.back().second + 1 == gno) {
    intervals.back().second = gno;
    return;
  }
  if (contains(sid, gno)) return;
  intervals.emplace_back(gno, gno);
  normalize(intervals);
}

bool MysqlGtidSet::contains(const std::string& sid, uint64_t gno) const {
  const auto it = sets_.find(sid);
  if (it == sets_.end()) return false;
  for (const auto& [first, last] : it->second)
    if (gno >= first && gno <= last) return true;
  return false;
}

std::string MysqlGtidSet::to_string() const {
  std::string out;
  for (const auto& [sid, intervals] : sets_) {
    if (intervals.empty()) continue;
    if (!out.empty()) out.push_back(',');
    out += sid;
    for (const auto& [first, last] : intervals) {
      out += ":" + std::to_string(first);
      if (last != first) out += "-" + std::to_string(last);
    }
  }
  return out;
}

SourcePosition BinlogPosition::to_source_position() const {
  return SourcePosition{std::string(kPrefix) + "flavor=" + (flavor == Flavor::MariaDb ? "mariadb" : "mysql") +
                        ";gtid=" + gtid + ";file=" + file + ";pos=" + std::to_string(position)};
}

std::optional<BinlogPosition> BinlogPosition::parse(const SourcePosition& source_position) {
  std::string_view t = source_position.token;
  if (t.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  t.remove_prefix(kPrefix.size());
  BinlogPosition p;
  bool have_flavor = false, have_file = false, have_pos = false;
  for (std::string_view field : split(t, ';')) {
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "flavor") {
      if (value == "mariadb") p.flavor = Flavor::MariaDb;
      else if (value == "mysql") p.flavor = Flavor::MySql;
      else return std::nullopt;
      have_flavor = true;
    } else if (key == "gtid") {
      p.gtid = std::string(value);
    } else if (key == "file") {
      p.file = std::string(value);
      have_file = true;
    } else if (key == "pos") {
      if (!parse_number(value, p.position)) return std::nullopt;
      have_pos = true;
    } else {
      return std::nullopt;
    }
  }
  if (!have_flavor || !have_file || !have_pos) return std::nullopt;
  if (p.flavor == Flavor::MariaDb ? !MariaGtidState::parse(p.gtid) : !MysqlGtidSet::parse(p.gtid)) return std::nullopt;
  return p;
}

std::string BinlogPosition::describe() const {
  const std::string at = file + ":" + std::to_string(position);
  return gtid.empty() ? at : "gtid " + gtid + " (" + at + ")";
}

}  // namespace tidemark::mysql
