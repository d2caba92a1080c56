#pragma once
// source.tables entries ("schema.table", '*' matches any run of characters) against catalog names.

#include <string>
#include <vector>

namespace tidemark {

// True when `name` matches `pattern`, where '*' matches any run of characters (also none).
bool glob_match(const std::string& pattern, const std::string& name);

// True when "schema.table" matches one of the patterns.
bool table_selected(const std::vector<std::string>& patterns, const std::string& qualified_name);

}  // namespace tidemark
