// MySqlSnapshotReader against a real MariaDB 10.11: the watermark and signal tables, describe's errors,
// chunk paging in key order (composite keys with a case-insensitive collation, and single keys of every
// type a key can have, FLOAT included), max_key, and the oracle: chunk rows equal, Value for Value, the rows
// MySqlSource decodes from the binlog for the same table.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <stop_token>
#include <thread>

#include "mysql_client.hpp"
#include "source/mysql/mysql_snapshot_reader.hpp"
#include "source/mysql/mysql_source.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using mysql::MySqlSnapshotReader;
using snapshot::ChunkQuery;
using snapshot::KeyText;
using snapshot::TableLayout;

std::string unique_suffix() {
  static std::atomic<int> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" + std::to_string(now % 1000000);
}

// The tables a test made, dropped at its end.
struct Tables {
  MySqlTarget root = real_mysql(true);
  std::string suffix = unique_suffix();
  std::vector<std::string> names;
  std::string name(const std::string& base) {
    names.push_back(base + "_" + suffix);
    return names.back();
  }
  ~Tables() {
    try {
      for (const auto& t : names) mysql_exec(root, "DROP TABLE IF EXISTS `" + root.database + "`.`" + t + "`");
    } catch (...) {
    }
  }
};

Config reader_config(const MySqlTarget& db, Tables& tables, const std::vector<std::string>& captured) {
  Config c;
  c.name = "snap_" + tables.suffix;
  c.source.type = "mysql";
  c.source.host = db.host;
  c.source.port = std::stoll(db.port);
  c.source.user = db.user;
  c.source.password = db.password;
  c.source.database = db.database;
  for (const auto& t : captured) c.source.tables.push_back(db.database + "." + t);
  c.snapshot.watermark_table = tables.name("wm");
  c.snapshot.signal_table = tables.name("sig");
  c.source.mysql.server_id = 20000 + getpid() % 20000;
  return c;
}

template <typename T>
const T& ok(const Fallible<T>& f) {
  if (!f.ok()) throw std::runtime_error("unexpected failure: " + f.error);
  return *f.value;
}

// Pages through the table in chunks of `limit`; every chunk's rows.
std::vector<Row> page(MySqlSnapshotReader& reader, const TableLayout& layout, size_t limit, const std::string& where = "",
                      std::optional<KeyText> upto = std::nullopt, size_t* chunks = nullptr) {
  std::vector<Row> rows;
  ChunkQuery q;
  q.layout = &layout;
  q.where = where;
  q.upto = std::move(upto);
  q.limit = limit;
  for (int i = 0; i < 1000; ++i) {
    auto chunk = reader.read_chunk(q);
    if (!chunk.ok()) {
      ADD_FAILURE() << chunk.error;
      break;
    }
    if (chunks) ++*chunks;
    rows.insert(rows.end(), chunk.value->rows.begin(), chunk.value->rows.end());
    EXPECT_LE(chunk.value->rows.size(), limit);
    if (chunk.value->rows.size() < limit) break;
    EXPECT_EQ(chunk.value->last_key.size(), layout.key_names.size());
    q.after = chunk.value->last_key;
  }
  return rows;
}

TEST(MySqlSnapshotReader, PrepareCreatesTheTablesIsIdempotentAndReportsTheDdlOtherwise) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  const std::string data = tables.name("data");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + data + "` (id INT PRIMARY KEY)");
  Config config = reader_config(db, tables, {"*_" + tables.suffix});
  const std::string wm = config.snapshot.watermark_table, sig = config.snapshot.signal_table;
  MySqlSnapshotReader reader(config);
  ASSERT_EQ(reader.connect(), std::nullopt);

  auto problems = reader.prepare(false);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("CREATE TABLE IF NOT EXISTS `" + db.database + "`.`" + wm +
                             "` (pipeline VARCHAR(255) PRIMARY KEY, mark VARCHAR(64) NOT NULL)"),
            std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("GRANT SELECT, INSERT, UPDATE ON `" + db.database + "`.`" + wm + "` TO '" + db.user + "'@"),
            std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("(id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT, created TIMESTAMP(6) NOT NULL "
                             "DEFAULT CURRENT_TIMESTAMP(6))"),
            std::string::npos) << problems[1];
  EXPECT_NE(problems[1].find("GRANT SELECT, INSERT ON"), std::string::npos) << problems[1];

  EXPECT_EQ(reader.prepare(true), std::vector<std::string>{});
  EXPECT_EQ(reader.prepare(true), std::vector<std::string>{}) << "idempotent";
  EXPECT_EQ(reader.prepare(false), std::vector<std::string>{});
  EXPECT_EQ(mysql_value(db, "SELECT CONCAT(COUNT(*), ':', MAX(mark)) FROM `" + wm + "` WHERE pipeline = '" + config.name + "'"), "1:");

  EXPECT_EQ(reader.write_watermark("low-1"), std::nullopt);
  EXPECT_EQ(mysql_value(db, "SELECT mark FROM `" + wm + "` WHERE pipeline = '" + config.name + "'"), "low-1");
  EXPECT_EQ(reader.write_watermark("low-1"), std::nullopt) << "the same mark again changes no row but the row exists";
  EXPECT_EQ(reader.insert_signal("sig-1", "execute-snapshot", R"({"data-collections": ["x"]})"), std::nullopt);
  EXPECT_EQ(mysql_value(db, "SELECT CONCAT(type, ' ', data, ' ', created > '2000-01-01') FROM `" + sig + "` WHERE id = 'sig-1'"),
            R"(execute-snapshot {"data-collections": ["x"]} 1)");
  EXPECT_NE(reader.insert_signal("sig-1", "x", ""), std::nullopt) << "a duplicate id";

  // The control tables are not among the captured tables, even where source.tables matches them.
  const auto captured = ok(reader.captured_tables());
  EXPECT_EQ(captured, (std::vector<TableId>{TableId{db.database, "", data}}));

  // Another pipeline on the same tables: no row until its prepare.
  Config other = config;
  other.name = config.name + "_other";
  MySqlSnapshotReader second(other);
  const auto missing = second.write_watermark("m");
  ASSERT_TRUE(missing.has_value());
  EXPECT_NE(missing->find("no row for pipeline '" + other.name + "'"), std::string::npos) << *missing;
  problems = second.prepare(false);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("INSERT IGNORE INTO"), std::string::npos) << problems[0];
  EXPECT_EQ(second.prepare(true), std::vector<std::string>{});
  EXPECT_EQ(second.write_watermark("m"), std::nullopt);

  // A table of that name that is not ours.
  Config wrong = config;
  wrong.snapshot.watermark_table = db.database + "." + tables.name("badwm");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + wrong.snapshot.watermark_table.substr(db.database.size() + 1) +
                              "` (x INT)");
  MySqlSnapshotReader bad(wrong);
  problems = bad.prepare(true);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("lacks the column(s) pipeline, mark"), std::string::npos) << problems[0];
}

TEST(MySqlSnapshotReader, DescribeResolvesNamesKeysAndReportsEachError) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  const std::string pk = tables.name("dpk"), nokey = tables.name("dnokey"), other = tables.name("dother");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + pk + "` (v INT, id INT NOT NULL, w TEXT, PRIMARY KEY (id))");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + nokey + "` (a INT NOT NULL, b VARCHAR(10) NOT NULL)");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + other + "` (id INT PRIMARY KEY)");
  Config config = reader_config(db, tables, {pk, nokey});
  MySqlSnapshotReader reader(config);

  const auto layout = ok(reader.describe(pk, {}));
  EXPECT_EQ(layout.schema->id, (TableId{db.database, "", pk})) << "the TableId the binlog source builds";
  EXPECT_EQ(layout.schema->columns, (std::vector<std::string>{"v", "id", "w"}));
  EXPECT_EQ(layout.schema->key_columns, (std::vector<size_t>{1}));
  EXPECT_EQ(layout.key_names, (std::vector<std::string>{"id"}));
  EXPECT_EQ(ok(reader.describe(db.database + "." + pk, {})).schema->id, layout.schema->id);

  auto error = [&](const std::string& name, const std::vector<std::string>& key = {}) {
    auto r = reader.describe(name, key);
    EXPECT_FALSE(r.ok()) << name;
    return r.error;
  };
  EXPECT_NE(error("no_such_table_" + tables.suffix).find("unknown table " + db.database + ".no_such_table_"), std::string::npos);
  EXPECT_NE(error(other).find("is not captured"), std::string::npos);
  const std::string no_key = error(nokey);
  EXPECT_NE(no_key.find("no primary key and no surrogate key"), std::string::npos) << no_key;
  EXPECT_NE(no_key.find("snapshot.surrogate_keys: {'" + db.database + "." + nokey + "': 'col'}"), std::string::npos) << no_key;
  EXPECT_NE(error(nokey, {"zz"}).find("surrogate key column 'zz' does not exist"), std::string::npos);
  EXPECT_NE(error(config.snapshot.watermark_table).find("watermark or signal table"), std::string::npos);

  const auto surrogate = ok(reader.describe(nokey, {"B"}));
  EXPECT_EQ(surrogate.schema->key_columns, (std::vector<size_t>{1}));
  EXPECT_EQ(surrogate.key_names, (std::vector<std::string>{"b"}));

  Config with_keys = config;
  with_keys.snapshot.surrogate_keys[db.database + "." + nokey] = "b, a";
  MySqlSnapshotReader configured(with_keys);
  const auto from_config = ok(configured.describe(nokey, {}));
  EXPECT_EQ(from_config.schema->key_columns, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(from_config.key_names, (std::vector<std::string>{"b", "a"}));
}


// (a INT, s VARCHAR utf8mb4_general_ci): the server's order, `>` and `=` all follow the collation.
TEST(MySqlSnapshotReader, CompositeKeyPagesInKeyOrderVisitingEveryRowOnce) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  const std::string t = tables.name("comp");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + t +
                              "` (v INT NOT NULL, s VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL, "
                              "a INT NOT NULL, PRIMARY KEY (a, s))");
  const std::vector<std::string> words = {"Apple", "banana", "Cherry", "date", "Émile", "fig", "GRAPE", "x y", "zed", "it's", "o\\k", ""};
  std::string insert = "INSERT INTO `" + t + "` (a, s, v) VALUES ";
  int v = 0;
  for (int a : {-3, 0, 7, 1000})
    for (const auto& w : words) {
      std::string quoted;
      for (char c : w) {
        if (c == '\'' || c == '\\') quoted.push_back('\\');
        quoted.push_back(c);
      }
      insert += std::string(v ? ", " : "") + "(" + std::to_string(a) + ", '" + quoted + "', " + std::to_string(v) + ")";
      ++v;
    }
  mysql_exec(db, insert);
  MySqlSession s(db);
  std::vector<Row> expected;
  for (const auto& r : s.rows("SELECT v, s, a FROM `" + t + "` ORDER BY a, s"))
    expected.push_back(Row{int64_t{std::stoll(*r[0])}, *r[1], int64_t{std::stoll(*r[2])}});
  ASSERT_EQ(expected.size(), 48u);

  Config config = reader_config(db, tables, {t});
  MySqlSnapshotReader reader(config);
  const auto layout = ok(reader.describe(t, {}));
  EXPECT_EQ(layout.key_names, (std::vector<std::string>{"a", "s"}));
  EXPECT_EQ(layout.schema->key_columns, (std::vector<size_t>{2, 1}));
  size_t chunks = 0;
  EXPECT_EQ(page(reader, layout, 7, "", std::nullopt, &chunks), expected);
  EXPECT_EQ(chunks, 7u) << "48 rows in chunks of 7";

  // The first chunk's last key, as text; and the largest key.
  ChunkQuery q;
  q.layout = &layout;
  q.limit = 7;
  const auto first = ok(reader.read_chunk(q));
  ASSERT_EQ(first.rows.size(), 7u);
  EXPECT_EQ(first.last_key, (KeyText{"-3", "fig"}));
  const auto max = ok(reader.max_key(layout, ""));
  EXPECT_EQ(max, (std::optional<KeyText>(KeyText{"1000", "zed"})));

  // after + upto + where: rows after (-3, 'fig') up to (7, 'GRAPE') inclusive with even v.
  q.after = first.last_key;
  q.upto = KeyText{"7", "grape"};  // the collation's equality: the stored 'GRAPE' is included
  q.where = "v % 2 = 0";
  q.limit = 100;
  const auto window = ok(reader.read_chunk(q));
  std::vector<Row> want;
  bool inside = false;
  for (const auto& row : expected) {
    const bool last = row[2] == Value(int64_t{7}) && row[1] == Value(std::string("GRAPE"));
    if (inside && std::get<int64_t>(row[0].v) % 2 == 0) want.push_back(row);
    if (row[2] == Value(int64_t{-3}) && row[1] == Value(std::string("fig"))) inside = true;
    if (last) break;
  }
  EXPECT_EQ(window.rows, want);
  EXPECT_EQ(page(reader, layout, 3, "v % 2 = 0", KeyText{"7", "grape"}).size(), want.size() + 3) << "from the start: the 3 even rows up to (-3, fig) too";

  // Key bounds that are not in the form of their column are refused, never pasted into SQL.
  q.after = KeyText{"1 OR 1=1", "x"};
  EXPECT_FALSE(reader.read_chunk(q).ok());
  q.after = KeyText{"1"};
  EXPECT_FALSE(reader.read_chunk(q).ok()) << "a key of the wrong width";
  q.after = KeyText{std::nullopt, "x"};
  EXPECT_FALSE(reader.read_chunk(q).ok()) << "a NULL in a bound";
  q.after.reset();
  q.upto.reset();
  q.where = "no_such_column = 1";
  EXPECT_FALSE(reader.read_chunk(q).ok());
  q.where = "";
  EXPECT_EQ(ok(reader.read_chunk(q)).rows.size(), 48u) << "the connection is still usable";
}

TEST(MySqlSnapshotReader, MaxKeyAndKeysWithNulls) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  const std::string t = tables.name("mk");
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + t + "` (id INT PRIMARY KEY, u INT NULL)");
  Config config = reader_config(db, tables, {t});
  MySqlSnapshotReader reader(config);
  const auto by_id = ok(reader.describe(t, {}));
  EXPECT_EQ(ok(reader.max_key(by_id, "")), std::nullopt) << "an empty table";
  mysql_exec(db, "INSERT INTO `" + t + "` VALUES (1, 10), (2, NULL), (3, 30), (-4, 40)");
  EXPECT_EQ(ok(reader.max_key(by_id, "")), (std::optional<KeyText>(KeyText{"3"})));
  EXPECT_EQ(ok(reader.max_key(by_id, "u > 35")), (std::optional<KeyText>(KeyText{"-4"})));
  EXPECT_EQ(ok(reader.max_key(by_id, "u > 1000")), std::nullopt);

  const auto by_u = ok(reader.describe(t, {"u"}));
  const auto refused = reader.max_key(by_u, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error.find("NULL in key column(s) u"), std::string::npos) << refused.error;
  EXPECT_EQ(ok(reader.max_key(by_u, "u IS NOT NULL")), (std::optional<KeyText>(KeyText{"40"})));
  EXPECT_EQ(ok(reader.max_key(by_u, "id <> 2")), (std::optional<KeyText>(KeyText{"40"})));
  EXPECT_FALSE(reader.max_key(by_u, "id = 2").ok());
}

// One single-column key of each type: paging in chunks of 2 visits the rows in the server's ORDER BY order,
// each once. This exercises each KeyText encoding as a bound (FLOAT as the exact double, ENUM/SET as numbers,
// bytes as hex, zero dates, negative TIME...).
TEST(MySqlSnapshotReader, EveryKeyTypePagesInTheServersOrder) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  struct KeyCase {
    std::string type;
    std::vector<std::string> values;
  };
  const std::vector<KeyCase> cases = {
      {"FLOAT", {"0.1", "-0.5", "3.4028235e38", "-3.4028235e38", "1.17549435e-38", "7.038531e-26", "1.5", "0", "0.30000001"}},
      {"DOUBLE", {"0.1", "5e-324", "-1.7976931348623157e308", "1.7976931348623157e308", "0.30000000000000004", "0.3", "-0.1"}},
      {"DECIMAL(10,3)", {"-1.5", "0", "0.001", "9999999.999", "-9999999.999", "1.5"}},
      {"BIGINT UNSIGNED", {"0", "1", "9223372036854775808", "18446744073709551615", "9223372036854775807"}},
      {"TINYINT", {"-128", "127", "0", "-1"}},
      {"YEAR", {"0", "1901", "2155", "1999", "2000"}},
      {"VARBINARY(8)", {"X'00'", "X''", "X'FF'", "X'0000'", "X'7F80'", "X'00FF'", "X'27'", "X'5C'"}},
      {"BINARY(4)", {"X'01'", "X'0001'", "X'FFFFFFFF'", "X'00000000'", "X'010000FF'"}},
      {"BIT(12)", {"b'1'", "b'101010101010'", "b'111111111111'", "b'0'", "b'100000000000'"}},
      {"CHAR(5) CHARACTER SET latin1", {"'é'", "'a'", "'Z'", "'€'", "'ÿ'", "' x'", "'\\''"}},
      {"VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", {"'a'", "'A'", "'😀'", "'é'", "'e'", "''"}},
      {"DATE", {"'0000-00-00'", "'0000-01-01'", "'2024-02-00'", "'1970-01-01'", "'9999-12-31'", "'1000-01-01'"}},
      {"DATETIME(6)", {"'1000-01-01 00:00:00'", "'2024-02-29 12:34:56.123456'", "'9999-12-31 23:59:59.999999'",
                       "'0000-00-00 00:00:00'", "'2024-02-29 12:34:56.123457'", "'2024-02-29 12:34:56'"}},
      {"TIMESTAMP(6)", {"'1970-01-01 00:00:01'", "'2038-01-19 03:14:07.999999'", "'2024-02-29 12:34:56.5'", "'2000-01-01'"}},
      {"TIME(6)", {"'-838:59:59'", "'-00:00:00.000001'", "'00:00:00'", "'12:00:00.5'", "'838:59:59'", "'-12:34:56.789012'"}},
      {"ENUM('b','a','c')", {"'a'", "'b'", "'c'", "'zz'"}},
      {"SET('x','y','z')", {"'x'", "'y'", "'x,y'", "'z'", "''", "'x,y,z'"}},
      {"UUID", {"'123e4567-e89b-12d3-a456-426614174000'", "'00000000-0000-0000-0000-000000000000'",
                "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'6ccd780c-baba-1026-9564-5b8c656024db'"}},
      {"INET6", {"'::'", "'::1'", "'2001:db8::1'", "'ffff::'", "'::ffff:1.2.3.4'"}},
  };
  MySqlSession s(db);
  s.exec("SET sql_mode = ''");  // zero dates, ENUM's error value
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type);
    const std::string t = tables.name("kt" + std::to_string(&c - cases.data()));
    mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + t + "` (k " + c.type + " NOT NULL PRIMARY KEY, n INT NOT NULL)");
    for (size_t i = 0; i < c.values.size(); ++i)
      s.exec("INSERT INTO `" + t + "` VALUES (" + c.values[i] + ", " + std::to_string(i) + ")");
    std::vector<int64_t> expected;
    for (const auto& r : s.rows("SELECT n FROM `" + t + "` ORDER BY k")) expected.push_back(std::stoll(*r[0]));
    ASSERT_EQ(expected.size(), c.values.size());
    Config config = reader_config(db, tables, {t});
    MySqlSnapshotReader reader(config);
    const auto layout = ok(reader.describe(t, {}));
    std::vector<int64_t> seen;
    for (const auto& row : page(reader, layout, 2)) seen.push_back(std::get<int64_t>(row[1].v));
    EXPECT_EQ(seen, expected);
    // The largest key bounds a full walk from above: nothing is lost at the top.
    const auto max = ok(reader.max_key(layout, ""));
    ASSERT_TRUE(max.has_value());
    std::vector<int64_t> upto;
    for (const auto& row : page(reader, layout, 3, "", *max)) upto.push_back(std::get<int64_t>(row[1].v));
    EXPECT_EQ(upto, expected);
  }
}


std::string describe_value(const Value& v) {
  std::string out = "#" + std::to_string(v.v.index()) + " ";
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) out += "'" + x.substr(0, 80) + "'";
        else if constexpr (std::is_same_v<T, Decimal> || std::is_same_v<T, Json>) out += x.text.substr(0, 80);
        else if constexpr (std::is_same_v<T, Bytes>) out += std::to_string(x.data.size()) + " bytes";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, bool>) out += std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", x);
          out += buf;
        } else if constexpr (std::is_same_v<T, Date>) out += std::to_string(x.days);
        else if constexpr (std::is_same_v<T, Time> || std::is_same_v<T, Timestamp> || std::is_same_v<T, TimestampTz>) out += std::to_string(x.micros);
        else if constexpr (std::is_same_v<T, Uuid>) out += uuid_to_string(x);
      },
      v.v);
  return out;
}

std::string sql_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "'";
}

// The oracle: every column type at interesting values, decoded by MySqlSource from the binlog and read by
// read_chunk; the two must agree Value for Value. Values after mysql_types_test.cpp.
TEST(MySqlSnapshotReader, ChunkRowsEqualTheBinlogDecodersRowsForEveryType) {
  Tables tables;
  const MySqlTarget db = real_mysql();
  const std::string t = tables.name("oracle");
  const std::vector<std::pair<std::string, std::string>> columns = {
      {"id", "INT NOT NULL PRIMARY KEY"}, {"ti", "TINYINT"}, {"tiu", "TINYINT UNSIGNED"}, {"si", "SMALLINT"},
      {"siu", "SMALLINT UNSIGNED"}, {"mi", "MEDIUMINT"}, {"miu", "MEDIUMINT UNSIGNED"}, {"i", "INT"}, {"iu", "INT UNSIGNED"},
      {"bi", "BIGINT"}, {"biu", "BIGINT UNSIGNED"}, {"d65", "DECIMAL(65,30)"}, {"d10", "DECIMAL(10,0)"}, {"d52", "DECIMAL(5,2)"},
      {"d206", "DECIMAL(20,6)"}, {"f", "FLOAT"}, {"dbl", "DOUBLE"}, {"b1", "BIT(1)"}, {"b12", "BIT(12)"}, {"b64", "BIT(64)"},
      {"y", "YEAR"}, {"dt", "DATE"}, {"dtnn", "DATE NOT NULL DEFAULT '2000-01-01'"}, {"tm", "TIME(6)"}, {"tm0", "TIME"},
      {"dtm", "DATETIME(6)"}, {"dtm0", "DATETIME(0)"}, {"dtmnn", "DATETIME(3) NOT NULL DEFAULT '2000-01-01 00:00:00'"},
      {"ts", "TIMESTAMP(6) NULL"}, {"ts0", "TIMESTAMP(0) NULL"}, {"tsnn", "TIMESTAMP(2) NOT NULL DEFAULT '2000-01-01 00:00:00'"},
      {"c4", "CHAR(10) CHARACTER SET utf8mb4"}, {"v4", "VARCHAR(100) CHARACTER SET utf8mb4"}, {"t4", "TEXT CHARACTER SET utf8mb4"},
      {"c3", "CHAR(10) CHARACTER SET utf8mb3"}, {"v3", "VARCHAR(100) CHARACTER SET utf8mb3"}, {"cl", "CHAR(10) CHARACTER SET latin1"},
      {"vl", "VARCHAR(100) CHARACTER SET latin1"}, {"tl", "TEXT CHARACTER SET latin1"}, {"cyr", "VARCHAR(20) CHARACTER SET cp1251"},
      {"sj", "VARCHAR(20) CHARACTER SET sjis"}, {"gb", "TEXT CHARACTER SET gbk"}, {"u16", "VARCHAR(20) CHARACTER SET utf16"},
      {"u32", "CHAR(5) CHARACTER SET utf32"}, {"bin", "BINARY(16)"}, {"vbin", "VARBINARY(100)"}, {"bl", "BLOB"}, {"tbl", "TINYBLOB"},
      {"mbl", "MEDIUMBLOB"}, {"lbl", "LONGBLOB"}, {"lt", "LONGTEXT CHARACTER SET utf8mb4"}, {"e", "ENUM('a','bb','ccc with space','é')"},
      {"enn", "ENUM('x','y') NOT NULL DEFAULT 'y'"}, {"s", "SET('x','y','z','w')"}, {"j", "JSON"}, {"g", "GEOMETRY"}, {"p", "POINT"},
      {"u", "UUID"}, {"i4", "INET4"}, {"i6", "INET6"}, {"nn", "VARCHAR(10) NOT NULL DEFAULT ''"}};
  std::string ddl;
  for (const auto& [name, type] : columns) ddl += (ddl.empty() ? "" : ", ") + ("`" + name + "` " + type);
  mysql_exec(tables.root, "CREATE TABLE `" + db.database + "`.`" + t + "` (" + ddl + ")");

  const std::string nines35(35, '9'), nines30(30, '9');
  const std::vector<std::map<std::string, std::string>> rows = {
      {{"id", "1"}, {"ti", "127"}, {"tiu", "255"}, {"si", "32767"}, {"siu", "65535"}, {"mi", "8388607"}, {"miu", "16777215"},
       {"i", "2147483647"}, {"iu", "4294967295"}, {"bi", "9223372036854775807"}, {"biu", "18446744073709551615"},
       {"d65", nines35 + "." + nines30}, {"d10", "9999999999"}, {"d52", "999.99"}, {"d206", "99999999999999.999999"},
       {"f", "3.4028235e38"}, {"dbl", "1.7976931348623157e308"}, {"b1", "b'1'"}, {"b12", "b'111111111111'"},
       {"b64", "b'" + std::string(64, '1') + "'"}, {"y", "2155"}, {"dt", "'9999-12-31'"}, {"dtnn", "'9999-12-31'"},
       {"tm", "'838:59:59.000000'"}, {"tm0", "'838:59:59'"}, {"dtm", "'9999-12-31 23:59:59.999999'"},
       {"dtm0", "'9999-12-31 23:59:59'"}, {"dtmnn", "'9999-12-31 23:59:59.999'"}, {"ts", "'2038-01-19 03:14:07.999999'"},
       {"ts0", "'2038-01-19 03:14:07'"}, {"tsnn", "'2038-01-19 03:14:07.99'"}, {"c4", sql_quote("😀 é ✓")},
       {"v4", sql_quote("emoji 😀🎉 and 𝄞 clef")}, {"t4", "REPEAT('𝄞😀', 1000)"}, {"c3", sql_quote("héllo ✓")},
       {"v3", sql_quote("ü€ 3-byte ✓ ☃")}, {"cl", sql_quote("€éÿ")}, {"vl", sql_quote("café € ‰ ƒ Œ")},
       {"tl", sql_quote("Ærø “quoted” – dash")}, {"cyr", sql_quote("Привет, мир №1")}, {"sj", sql_quote("日本語テキスト ｱｲｳ")},
       {"gb", sql_quote("中文字符 测试")}, {"u16", sql_quote("😀 utf16 𝄞")}, {"u32", sql_quote("😀a ")},
       {"bin", "X'00112233445566778899AABBCCDDEEFF'"}, {"vbin", "X'00FF0080'"}, {"bl", "X'DEADBEEF00'"}, {"tbl", "X'00'"},
       {"mbl", "X'0102030405'"}, {"lbl", "REPEAT(X'00FF7F80', 50000)"}, {"lt", "REPEAT('long ✓ ', 10000)"}, {"e", sql_quote("é")},
       {"enn", "'x'"}, {"s", "'x,y,z,w'"}, {"j", sql_quote(R"({"a": [1, 2.5, "😀"], "b": null, "c": {"d": true}})")},
       {"g", "ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)', 4326)"}, {"p", "ST_PointFromText('POINT(1.5 -2.25)')"},
       {"u", "'123e4567-e89b-12d3-a456-426614174000'"}, {"i4", "'255.255.255.255'"},
       {"i6", "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'"}, {"nn", "'max'"}},
      {{"id", "2"}, {"ti", "-128"}, {"tiu", "0"}, {"si", "-32768"}, {"siu", "0"}, {"mi", "-8388608"}, {"miu", "0"},
       {"i", "-2147483648"}, {"iu", "0"}, {"bi", "-9223372036854775808"}, {"biu", "0"}, {"d65", "-" + nines35 + "." + nines30},
       {"d10", "-9999999999"}, {"d52", "-999.99"}, {"d206", "-0.000001"}, {"f", "-3.4028235e38"}, {"dbl", "-1.7976931348623157e308"},
       {"b1", "b'0'"}, {"b12", "b'101010101010'"}, {"b64", "b'1'"}, {"y", "1901"}, {"dt", "'1000-01-01'"}, {"dtnn", "'1000-01-01'"},
       {"tm", "'-838:59:59.000000'"}, {"tm0", "'-838:59:59'"}, {"dtm", "'1000-01-01 00:00:00.000000'"},
       {"dtm0", "'1000-01-01 00:00:00'"}, {"dtmnn", "'1000-01-01 00:00:00.001'"}, {"ts", "'1970-01-01 00:00:01.000000'"},
       {"ts0", "'1970-01-01 00:00:01'"}, {"tsnn", "'1970-01-01 00:00:01.01'"}, {"c4", "' x'"}, {"v4", "'  leading and trailing  '"},
       {"t4", sql_quote("tab\there\nnewline \"quotes\" \\ backslash")}, {"c3", "'a'"}, {"v3", "''"}, {"cl", "' '"}, {"vl", "'x'"},
       {"tl", "''"}, {"cyr", "''"}, {"sj", "''"}, {"gb", "''"}, {"u16", "''"}, {"u32", "''"}, {"bin", "X'FF'"}, {"vbin", "X''"},
       {"bl", "X''"}, {"tbl", "X'FF'"}, {"mbl", "X''"}, {"lbl", "X''"}, {"lt", "''"}, {"e", "'a'"}, {"s", "''"}, {"j", "'[]'"},
       {"g", "ST_GeomFromText('POINT(0 0)')"}, {"p", "POINT(-180, 90)"}, {"u", "'00000000-0000-0000-0000-000000000000'"},
       {"i4", "'0.0.0.0'"}, {"i6", "'::'"}, {"nn", "''"}},
      {{"id", "3"}},  // NULL in every nullable column
      {{"id", "4"}, {"ti", "0"}, {"tiu", "0"}, {"si", "0"}, {"siu", "0"}, {"mi", "0"}, {"miu", "0"}, {"i", "0"}, {"iu", "0"},
       {"bi", "0"}, {"biu", "0"}, {"d65", "0"}, {"d10", "0"}, {"d52", "0"}, {"d206", "0"}, {"f", "0"}, {"dbl", "0"}, {"b1", "0"},
       {"b12", "0"}, {"b64", "0"}, {"y", "0"}, {"dt", "'0000-00-00'"}, {"dtnn", "'0000-00-00'"}, {"tm", "'00:00:00.000000'"},
       {"tm0", "'00:00:00'"}, {"dtm", "'0000-00-00 00:00:00'"}, {"dtm0", "'0000-00-00 00:00:00'"},
       {"dtmnn", "'0000-00-00 00:00:00'"}, {"ts", "'0000-00-00 00:00:00'"}, {"ts0", "'0000-00-00 00:00:00'"},
       {"tsnn", "'0000-00-00 00:00:00'"}, {"c4", "''"}, {"v4", "''"}, {"t4", "''"}, {"c3", "''"}, {"v3", "''"}, {"cl", "''"},
       {"vl", "''"}, {"tl", "''"}, {"bin", "''"}, {"vbin", "''"}, {"bl", "''"}, {"tbl", "''"}, {"mbl", "''"}, {"lbl", "''"},
       {"lt", "''"}, {"e", "''"}, {"enn", "'bad'"}, {"s", "''"}, {"j", "'{}'"}, {"u", "'abcdef00-0000-0000-0000-000000000000'"},
       {"i4", "'0.0.0.0'"}, {"i6", "'::ffff:1.2.3.0'"}, {"nn", "''"}},
      {{"id", "5"}, {"ti", "1"}, {"tiu", "128"}, {"si", "-1"}, {"siu", "32768"}, {"mi", "-1"}, {"miu", "8388608"}, {"i", "-1"},
       {"iu", "2147483648"}, {"bi", "-1"}, {"biu", "9223372036854775808"}, {"d65", "-0.000000000000000000000000000001"},
       {"d10", "1"}, {"d52", "-0.01"}, {"d206", "12345678901234.567891"}, {"f", "1.17549435e-38"}, {"dbl", "5e-324"}, {"b1", "1"},
       {"b12", "b'1'"}, {"b64", "b'1" + std::string(62, '0') + "1'"}, {"y", "1999"}, {"dt", "'2024-02-00'"},
       {"dtnn", "'2024-00-00'"}, {"tm", "'-12:34:56.789012'"}, {"tm0", "'-00:00:01'"}, {"dtm", "'2024-02-29 12:34:56.123456'"},
       {"dtm0", "'0000-01-01 00:00:00'"}, {"dtmnn", "'2024-02-29 23:59:59.999'"}, {"ts", "'2024-02-29 12:34:56.000001'"},
       {"ts0", "'2024-02-29 12:34:56'"}, {"tsnn", "'2024-02-29 12:34:56.5'"}, {"c4", "'abc'"}, {"v4", "'x'"}, {"t4", "''"},
       {"c3", "''"}, {"v3", "'x'"}, {"cl", sql_quote("é")}, {"vl", "''"}, {"tl", sql_quote("€")}, {"cyr", sql_quote("ё")},
       {"bin", "X'0102'"}, {"vbin", "X'000000'"}, {"bl", "X'00'"}, {"tbl", "''"}, {"mbl", "REPEAT(X'AB', 70000)"}, {"lbl", "X'0A0B'"},
       {"lt", "'x'"}, {"e", "'bb'"}, {"s", "'w,x'"}, {"j", sql_quote(R"("just a string")")},
       {"g", "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))')"}, {"p", "POINT(0, 0)"},
       {"u", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"}, {"i4", "'1.2.3.4'"}, {"i6", "'2001:db8::1'"}, {"nn", "'n'"}},
      {{"id", "6"}, {"f", "0.1"}, {"dbl", "0.1"}, {"d52", "0.5"}, {"tm", "'-00:00:00.000001'"}, {"dt", "'0000-01-01'"},
       {"dtm", "'1970-01-01 00:00:00.000001'"}, {"ts", "'1970-01-01 00:00:01.5'"}, {"y", "2000"}, {"i6", "'::1'"},
       {"cl", sql_quote("Œ")}, {"u", "'6ccd780c-baba-1026-9564-5b8c656024db'"}}};

  Config config = reader_config(db, tables, {t});
  mysql::MySqlSource source(config);
  ASSERT_EQ(source.check(), std::vector<std::string>{});
  EventQueue queue(100000, size_t{1} << 30, [](const StreamItem& item) { return approximate_bytes(item); });
  std::jthread log([&](std::stop_token stop) {
    const SourceOutcome outcome = source.run(std::nullopt, queue, stop);
    EXPECT_TRUE(outcome.ok) << outcome.error;
  });
  // The first item is the end of the binlog the source starts from: changes after it are captured.
  std::vector<StreamItem> items;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (items.empty() && std::chrono::steady_clock::now() < deadline) queue.pop_batch(items, 100, 100ms);
  ASSERT_FALSE(items.empty()) << "the source did not start";

  MySqlSession s(tables.root);
  s.exec("USE `" + db.database + "`");
  s.exec("SET sql_mode = ''");
  for (const auto& row : rows) {
    std::string names, values;
    for (const auto& [name, value] : row) {
      names += (names.empty() ? "`" : ", `") + name + "`";
      values += (values.empty() ? "" : ", ") + value;
    }
    s.exec("INSERT INTO `" + t + "` (" + names + ") VALUES (" + values + ")");
  }
  // Updates too: the after image of an update is decoded the same way.
  s.exec("UPDATE `" + t + "` SET ti = -1, v4 = 'updated 🎉', s = 'y,w', e = 'ccc with space', j = '{\"u\": [true, false]}', "
         "bin = X'AB', f = 7.038531e-26, dbl = 0.30000000000000004 WHERE id = 4");

  std::map<int64_t, ChangeEvent> last;  // id -> its last event
  size_t events = 0;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (events < rows.size() + 1 && std::chrono::steady_clock::now() < until) {
    items.clear();
    queue.pop_batch(items, 100, 100ms);
    for (auto& item : items) {
      auto* e = std::get_if<ChangeEvent>(&item);
      if (!e || e->table->id.table != t || !e->after) continue;
      ++events;
      last[std::get<int64_t>((*e->after)[0].v)] = *e;
    }
  }
  log.request_stop();
  log.join();
  ASSERT_EQ(events, rows.size() + 1);
  ASSERT_EQ(last.size(), rows.size());

  MySqlSnapshotReader reader(config);
  const auto layout = ok(reader.describe(t, {}));
  const ChangeEvent& any = last.begin()->second;
  EXPECT_EQ(layout.schema->id, any.table->id);
  EXPECT_EQ(layout.schema->columns, any.table->columns);
  EXPECT_EQ(layout.schema->key_columns, any.table->key_columns);
  ChunkQuery q;
  q.layout = &layout;
  q.limit = 100;
  const auto chunk = ok(reader.read_chunk(q));
  ASSERT_EQ(chunk.rows.size(), rows.size());
  for (const Row& row : chunk.rows) {
    const int64_t id = std::get<int64_t>(row[0].v);
    ASSERT_TRUE(last.count(id)) << id;
    const Row& logged = *last.at(id).after;
    ASSERT_EQ(row.size(), logged.size());
    for (size_t i = 0; i < row.size(); ++i) {
      EXPECT_EQ(row[i], logged[i]) << "row " << id << " column " << layout.schema->columns[i] << ": SELECT "
                                   << describe_value(row[i]) << ", binlog " << describe_value(logged[i]);
    }
  }
  EXPECT_EQ(chunk.last_key, (KeyText{"6"}));
}

}  // namespace
}  // namespace tidemark::test
