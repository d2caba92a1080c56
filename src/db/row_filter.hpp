#pragma once
// The `where` of a snapshot request comes from the signal table, which application users may be allowed to
// write. It is pasted into the chunk SQL, so it is checked first: it must be one expression over the
// table's own columns, so a signal can at most filter the rows of the table it names (docs/security.md).
//
// Allowed: column names (unqualified; quoted with the database's identifier quote when needed), numbers,
// '...' strings, the operators = <> != < > <= >= + - * / % || ::, parentheses (balanced), commas, the
// keywords of comparisons, boolean logic, CASE, casts and intervals, and calls of a fixed list of pure
// functions (lower, coalesce, date_trunc, ...).
// Refused, each with its own message: `;`, comments, backslashes (escape rules differ by server mode),
// `$` (PostgreSQL parameters and dollar quotes), subqueries and set operators (SELECT, UNION, ...), any
// other function, names that are not columns of the table, qualified names, unbalanced parentheses.
//
// This is a filter, not a parser: it admits some expressions the database then rejects (a syntax error
// refuses the request as before), but nothing that reaches outside the expression.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark {

// How the source database spells identifiers and strings.
struct SqlDialect {
  char identifier_quote = '"';        // '"' PostgreSQL, '`' MySQL
  bool fold_unquoted_to_lower = true;  // PostgreSQL folds unquoted names; MySQL column names ignore case
  bool quoted_names_ignore_case = false;
};

inline constexpr size_t kMaxRowFilterLength = 4096;

// nullopt when `where` is an acceptable filter over `columns`; otherwise why not (without echoing more
// than a short excerpt of the input).
std::optional<std::string> check_row_filter(std::string_view where, const std::vector<std::string>& columns,
                                            const SqlDialect& dialect);

}  // namespace tidemark
