#include "source/table_patterns.hpp"

namespace tidemark {

bool glob_match(const std::string& pattern, const std::string& name) {
  // Iterative matcher with one backtrack point: linear in practice, no recursion.
  size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool table_selected(const std::vector<std::string>& patterns, const std::string& qualified_name) {
  for (const auto& pattern : patterns)
    if (glob_match(pattern, qualified_name)) return true;
  return false;
}

}  // namespace tidemark
