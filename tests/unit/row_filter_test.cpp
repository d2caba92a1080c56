// The check that keeps a signal's `where` inside the table it names (src/db/row_filter.hpp). The
// attacks here are the ones the hardening review reproduced against the chunk SQL, in both dialects.

#include "db/row_filter.hpp"

#include <gtest/gtest.h>

namespace tidemark::snapshot {
namespace {

const SqlDialect kPostgres{'"', true, false};
const SqlDialect kMySql{'`', false, true};
const std::vector<std::string> kColumns = {"id", "color", "created", "Mixed Case", "v"};

std::optional<std::string> pg(const std::string& where) { return check_row_filter(where, kColumns, kPostgres); }
std::optional<std::string> my(const std::string& where) { return check_row_filter(where, kColumns, kMySql); }

void expect_refused(const std::string& where, const std::string& because) {
  for (const auto& [name, result] : {std::pair{"postgres", pg(where)}, std::pair{"mysql", my(where)}}) {
    ASSERT_TRUE(result.has_value()) << name << " accepted: " << where;
    EXPECT_NE(result->find(because), std::string::npos) << name << ": " << *result;
  }
}

TEST(RowFilter, AcceptsExpressionsOverTheTablesColumns) {
  for (const std::string where :
       {"id > 50", "v % 3 <> 0", "color = 'blue' AND NOT (id BETWEEN 1 AND 10)", "id > 180 OR id = 3",
        "color IN ('a', 'b''s') OR color IS NULL", "lower(color) LIKE 'bl%'", "coalesce(v, 0) >= -1.5e3", "v > 1e+5 AND v < .5 AND v <> 0x1F",
        "CASE WHEN v > 1 THEN 1 ELSE 0 END = 1", "created > DATE '2024-01-01'", "id <> 5 AND id != 6"}) {
    EXPECT_EQ(pg(where), std::nullopt) << where;
    EXPECT_EQ(my(where), std::nullopt) << where;
  }
  EXPECT_EQ(pg("\"Mixed Case\" = 1 AND created > now() - interval '1 day' AND v::text = '3'"), std::nullopt);
  EXPECT_EQ(pg("ID = 1"), std::nullopt);  // folded to id
  EXPECT_EQ(my("`Mixed Case` = 1 AND created > NOW() - INTERVAL 1 DAY AND ID = 2"), std::nullopt);
}

TEST(RowFilter, RefusesStackedStatements) {
  expect_refused("1=1); CREATE TABLE pwned(x int); DROP TABLE victim; --", "unbalanced parentheses");
  expect_refused("1=1; CREATE TABLE pwned(x int)", "';' is not allowed");
  expect_refused("id = 1;", "';' is not allowed");
}

TEST(RowFilter, RefusesReadingOtherTables) {
  expect_refused("1=0) UNION SELECT 800000+id, secret FROM other.table -- ", "unbalanced parentheses");
  expect_refused("1=0 UNION SELECT 1", "set operators");
  expect_refused("id = 1union select 1", "set operators");  // MySQL reads 1union as 1 UNION
  expect_refused("id = 1e5union select 1", "set operators");
  expect_refused("id = 0x1Funion select 1", "set operators");
  expect_refused("id IN (SELECT id FROM other)", "subqueries");
  expect_refused("EXISTS (SELECT 1)", "subqueries");
  expect_refused("id = other.id", "qualified names");
  expect_refused("secret = 1", "not a column");
}

TEST(RowFilter, RefusesFunctionsWithEffects) {
  for (const std::string call : {"pg_sleep(100)", "pg_drop_replication_slot('s')", "sleep(100)", "load_file('/etc/passwd')",
                                 "benchmark(1000000, md5('x'))", "dblink('x', 'y')", "set_config('a', 'b', false)",
                                 "pg_catalog.pg_sleep(1)", "query_to_xml('select 1', true, true, '')"})
    expect_refused("id = 1 OR " + call + " IS NULL", call.find('.') != std::string::npos ? "" : "is not allowed");
}

TEST(RowFilter, RefusesCommentsQuotesAndEscapes) {
  expect_refused("id = 1 -- rest", "comments");
  expect_refused("id = 1 /* x */", "comments");
  expect_refused("id = 1 # x", "comments");
  expect_refused("color = 'a\\' OR 1=1) UNION SELECT 1 -- '", "backslashes");
  expect_refused("color = $$x$$", "'$'");
  expect_refused("id = $1", "'$'");
  expect_refused("color = 'open", "not closed");
  expect_refused("(id = 1", "not closed");
  expect_refused("id = @@version", "'@'");
  expect_refused("   ", "empty");
  EXPECT_NE(pg("color = `x`"), std::nullopt);   // backticks are not PostgreSQL's quote
  EXPECT_NE(my("color = \"x\""), std::nullopt);  // a MySQL double quote may be a string or a name: refused
  EXPECT_NE(pg("\"secret\" = 1"), std::nullopt);
  EXPECT_NE(pg("\"mixed case\" = 1"), std::nullopt);  // quoted names are exact in PostgreSQL
  EXPECT_NE(pg("\"id\" = 1 OR \"x\"\" = 1"), std::nullopt);
  EXPECT_NE(pg("Mixed = 1"), std::nullopt);
}

TEST(RowFilter, StringsMayHoldAnything) {
  EXPECT_EQ(pg("color = '; DROP TABLE x; -- /* UNION SELECT'"), std::nullopt);
  EXPECT_EQ(my("color = 'it''s (not) a ) paren'"), std::nullopt);
}

TEST(RowFilter, RefusesLongConditions) {
  std::string where = "id = 1";
  while (where.size() <= kMaxRowFilterLength) where += " OR id = 1";
  const auto result = pg(where);
  ASSERT_TRUE(result.has_value());
  EXPECT_NE(result->find("at most 4096"), std::string::npos) << *result;
  EXPECT_LT(result->size(), 200u);
}

}  // namespace
}  // namespace tidemark::snapshot
