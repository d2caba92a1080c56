// PgSnapshotReader against the real PostgreSQL 15: the watermark and signal tables, table resolution and
// its errors, key-order paging with bounds, the largest key, and the oracle: chunk rows equal, Value for
// Value, the rows PostgresSource decodes from pgoutput for the same stored rows.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <map>
#include <sstream>
#include <thread>

#include "pg_client.hpp"
#include "source/postgres/pg_snapshot_reader.hpp"
#include "source/postgres/postgres_source.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;
using pg::PgSnapshotReader;
using snapshot::ChunkQuery;
using snapshot::KeyText;
using snapshot::TableLayout;

std::string unique_suffix() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::ostringstream out;
  out << std::hex << ::getpid() << "_" << (now & 0xffffffffff);
  return out.str();
}

// Readable failure output for values (gtest would dump their bytes).
std::string show(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Null>) return "NULL";
        else if constexpr (std::is_same_v<T, Unavailable>) return "UNAVAILABLE";
        else if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, double>)
          return std::to_string(v) + (std::is_same_v<T, double> ? " (double)" : "");
        else if constexpr (std::is_same_v<T, std::string>) return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Decimal> || std::is_same_v<T, Json>) return v.text;
        else if constexpr (std::is_same_v<T, Bytes>) return "bytes(" + std::to_string(v.data.size()) + ")";
        else if constexpr (std::is_same_v<T, Interval>)
          return "interval(" + std::to_string(v.months) + "," + std::to_string(v.days) + "," + std::to_string(v.micros) + ")";
        else if constexpr (std::is_same_v<T, Uuid>) return uuid_to_string(v);
        else if constexpr (std::is_same_v<T, Array>) {
          std::string out = "[";
          for (const auto& item : v.items) out += show(item) + ",";
          return out + "]";
        } else if constexpr (std::is_same_v<T, Date>) return "date " + std::to_string(v.days);
        else return "time/timestamp " + std::to_string(v.micros);
      },
      value.v);
}

// Value::operator== compares doubles with ==, so NaN differs even from itself; here two NaNs are the same value.
bool same(const Value& a, const Value& b) {
  const auto* x = std::get_if<double>(&a.v);
  const auto* y = std::get_if<double>(&b.v);
  if (x && y && std::isnan(*x) && std::isnan(*y)) return true;
  const auto* xs = std::get_if<Array>(&a.v);
  const auto* ys = std::get_if<Array>(&b.v);
  if (xs && ys) {
    if (xs->items.size() != ys->items.size()) return false;
    for (size_t i = 0; i < xs->items.size(); ++i)
      if (!same(xs->items[i], ys->items[i])) return false;
    return true;
  }
  return a == b;
}

std::string text_of(const Value& value) {
  if (const auto* s = std::get_if<std::string>(&value.v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&value.v)) return std::to_string(*i);
  return "<" + show(value) + ">";
}

// Tables, slot and publication named after one suffix no other run used; all dropped at the end.
struct SnapshotFixture {
  PgTarget pg = real_postgres();
  PgTarget admin = real_postgres(true);
  std::string suffix = unique_suffix();
  std::vector<std::string> drops;  // statements run (as superuser) at the end, in reverse order

  // The slot and the publication go first, then `drops` in reverse order (tables before their types).
  ~SnapshotFixture() {
    drops.push_back("SET client_min_messages = warning; DROP PUBLICATION IF EXISTS " + slot());
    drops.push_back("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot() +
                    "' AND NOT active");
    for (auto it = drops.rbegin(); it != drops.rend(); ++it) {
      try {
        pg_exec(admin, *it);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "cleanup: " << e.what();
      }
    }
  }

  std::string table(const std::string& base) {
    const std::string name = base + "_" + suffix;
    drops.push_back("DROP TABLE IF EXISTS public." + name);
    return name;
  }
  std::string slot() const { return "tm_" + suffix; }

  Config config() const {
    Config c;
    c.name = "snap_" + suffix;
    c.source.type = "postgres";
    c.source.host = pg.host;
    c.source.port = std::stoll(pg.port);
    c.source.user = pg.user;
    c.source.password = pg.password;
    c.source.database = pg.database;
    c.source.tables = {"public.*_" + suffix};  // also matches the watermark and signal tables below
    c.source.postgres.slot = slot();
    c.source.postgres.publication = slot();
    c.source.postgres.create_publication = true;
    c.source.postgres.status_interval_ms = 1000;
    c.snapshot.watermark_table = "wm_" + suffix;
    c.snapshot.signal_table = "sig_" + suffix;
    c.snapshot.chunk_size = 7;
    return c;
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string all_of(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

TEST(PgSnapshotReader, PrepareCreatesTheTablesAndTheRowIdempotentlyOrPrintsTheDdl) {
  SnapshotFixture f;
  const std::string wm = f.table("wm"), sig = f.table("sig");
  const Config config = f.config();
  PgSnapshotReader reader(config);
  ASSERT_EQ(reader.connect(), std::nullopt);

  // Nothing exists yet: without `create`, the exact DDL and grants.
  const auto missing = reader.prepare(false);
  ASSERT_EQ(missing.size(), 2u) << all_of(missing);
  EXPECT_TRUE(contains(missing[0], "CREATE TABLE IF NOT EXISTS \"public\".\"" + wm +
                                       "\" (pipeline text PRIMARY KEY, mark text NOT NULL)"))
      << missing[0];
  EXPECT_TRUE(contains(missing[0], "GRANT SELECT, INSERT, UPDATE ON \"public\".\"" + wm + "\" TO \"" + f.pg.user + "\";"))
      << missing[0];
  EXPECT_TRUE(contains(missing[1], "CREATE TABLE IF NOT EXISTS \"public\".\"" + sig +
                                       "\" (id text PRIMARY KEY, type text NOT NULL, data text, "
                                       "created timestamptz NOT NULL DEFAULT now())"))
      << missing[1];
  EXPECT_TRUE(contains(missing[1], "GRANT SELECT, INSERT ON \"public\".\"" + sig + "\" TO \"" + f.pg.user + "\";"))
      << missing[1];
  EXPECT_TRUE(pg_query(f.pg, "SELECT 1 FROM pg_class WHERE relname = '" + wm + "'").empty()) << "created nothing";

  EXPECT_EQ(reader.prepare(true), std::vector<std::string>{});
  EXPECT_EQ(reader.prepare(true), std::vector<std::string>{}) << "idempotent";
  EXPECT_EQ(reader.prepare(false), std::vector<std::string>{}) << "complete now";
  EXPECT_EQ(pg_query(f.pg, "SELECT pipeline || '=' || mark FROM " + wm), std::vector<std::string>{config.name + "="});

  EXPECT_EQ(reader.write_watermark("low-1"), std::nullopt);
  EXPECT_EQ(pg_query(f.pg, "SELECT mark FROM " + wm + " WHERE pipeline = '" + config.name + "'"),
            std::vector<std::string>{"low-1"});
  EXPECT_EQ(reader.insert_signal("s-1", "execute-snapshot", R"({"data-collections":["public.t"]})"), std::nullopt);
  EXPECT_EQ(pg_query(f.pg, "SELECT id || ' ' || type || ' ' || data || ' ' || (created IS NOT NULL) FROM " + sig),
            std::vector<std::string>{R"(s-1 execute-snapshot {"data-collections":["public.t"]} true)"});
  const auto duplicate = reader.insert_signal("s-1", "execute-snapshot", "");
  ASSERT_TRUE(duplicate.has_value());
  EXPECT_TRUE(contains(*duplicate, "s-1")) << *duplicate;

  // The pipeline's row is gone: the UPDATE changes nothing, which is an error naming the fix.
  pg_exec(f.pg, "DELETE FROM " + wm);
  const auto no_row = reader.write_watermark("low-2");
  ASSERT_TRUE(no_row.has_value());
  EXPECT_TRUE(contains(*no_row, "INSERT INTO \"public\".\"" + wm + "\" (pipeline, mark) VALUES ('" + config.name + "', '')"))
      << *no_row;
  const auto row_missing = reader.prepare(false);
  ASSERT_EQ(row_missing.size(), 1u) << all_of(row_missing);
  EXPECT_TRUE(contains(row_missing[0], "ON CONFLICT DO NOTHING")) << row_missing[0];
  EXPECT_EQ(reader.prepare(true), std::vector<std::string>{});
  EXPECT_EQ(reader.write_watermark("low-3"), std::nullopt);

  // An existing signal table without the needed columns.
  Config other = config;
  other.snapshot.signal_table = "public." + f.table("badsig");
  pg_exec(f.pg, "CREATE TABLE " + other.snapshot.signal_table + " (id text PRIMARY KEY)");
  PgSnapshotReader bad(other);
  ASSERT_EQ(bad.connect(), std::nullopt);
  const auto lacking = bad.prepare(true);
  ASSERT_EQ(lacking.size(), 1u) << all_of(lacking);
  EXPECT_TRUE(contains(lacking[0], "lacks column(s) type, data")) << lacking[0];
}

TEST(PgSnapshotReader, CapturedTablesAreSourceTablesWithoutTheWatermarkAndSignalTables) {
  SnapshotFixture f;
  f.table("wm");
  f.table("sig");
  const std::string a = f.table("a"), b = f.table("b"), outside = "nc" + f.suffix;
  f.drops.push_back("DROP TABLE IF EXISTS " + outside);
  pg_exec(f.pg, "CREATE TABLE " + a + " (id int PRIMARY KEY); CREATE TABLE " + b + " (id int PRIMARY KEY); CREATE TABLE " +
                    outside + " (id int)");
  PgSnapshotReader reader(f.config());
  ASSERT_EQ(reader.connect(), std::nullopt);
  ASSERT_EQ(reader.prepare(true), std::vector<std::string>{});
  const auto tables = reader.captured_tables();
  ASSERT_TRUE(tables.ok()) << tables.error;
  const std::string db = f.pg.database;
  EXPECT_EQ(*tables.value, (std::vector<TableId>{{db, "public", a}, {db, "public", b}}));
}

TEST(PgSnapshotReader, DescribeNamesWhatIsWrongAndUsesASurrogateKey) {
  SnapshotFixture f;
  const std::string keyed = f.table("keyed"), nokey = f.table("nokey"), outside = "nc" + f.suffix;
  const std::string wm = f.table("wm");
  f.table("sig");
  f.drops.push_back("DROP TABLE IF EXISTS " + outside);
  pg_exec(f.pg, "CREATE TABLE " + keyed + " (v text, id int PRIMARY KEY, gone int, g int GENERATED ALWAYS AS (id * 2) STORED);"
                "ALTER TABLE " + keyed + " DROP COLUMN gone;"
                "CREATE TABLE " + nokey + " (v int, code text NOT NULL);"
                "CREATE TABLE " + outside + " (id int PRIMARY KEY);"
                "INSERT INTO " + nokey + " VALUES (1, 'b'), (2, 'a'), (3, 'c')");
  PgSnapshotReader reader(f.config());
  ASSERT_EQ(reader.connect(), std::nullopt);
  ASSERT_EQ(reader.prepare(true), std::vector<std::string>{});

  const auto unknown = reader.describe("nosuch_" + f.suffix, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(contains(unknown.error, "public.nosuch_" + f.suffix) && contains(unknown.error, "does not exist"))
      << unknown.error;
  const auto not_captured = reader.describe(outside, {});
  ASSERT_FALSE(not_captured.ok());
  EXPECT_TRUE(contains(not_captured.error, "public." + outside) && contains(not_captured.error, "source.tables"))
      << not_captured.error;
  const auto watermark = reader.describe(wm, {});
  ASSERT_FALSE(watermark.ok()) << "the watermark table matches source.tables but is never snapshotted";
  EXPECT_TRUE(contains(watermark.error, "watermark")) << watermark.error;
  const auto no_key = reader.describe("public." + nokey, {});
  ASSERT_FALSE(no_key.ok());
  EXPECT_TRUE(contains(no_key.error, "no primary key") &&
              contains(no_key.error, "snapshot.surrogate_keys: {'public." + nokey + "': 'col'}"))
      << no_key.error;
  const auto bad_surrogate = reader.describe(nokey, {"nosuch"});
  ASSERT_FALSE(bad_surrogate.ok());
  EXPECT_TRUE(contains(bad_surrogate.error, "nosuch") && contains(bad_surrogate.error, "snapshot.surrogate_keys"))
      << bad_surrogate.error;

  // The columns pgoutput sends: no dropped column, no generated column.
  const auto described = reader.describe("public." + keyed, {});
  ASSERT_TRUE(described.ok()) << described.error;
  const TableLayout& layout = *described.value;
  EXPECT_EQ(layout.schema->id, (TableId{f.pg.database, "public", keyed}));
  EXPECT_EQ(layout.schema->columns, (std::vector<std::string>{"v", "id"}));
  EXPECT_EQ(layout.schema->key_columns, std::vector<size_t>{1});
  EXPECT_EQ(layout.key_names, std::vector<std::string>{"id"});

  const auto surrogate = reader.describe(nokey, {"code"});
  ASSERT_TRUE(surrogate.ok()) << surrogate.error;
  EXPECT_EQ(surrogate.value->schema->columns, (std::vector<std::string>{"v", "code"}));
  EXPECT_EQ(surrogate.value->schema->key_columns, std::vector<size_t>{1});
  const auto chunk = reader.read_chunk(ChunkQuery{&*surrogate.value, "", std::nullopt, std::nullopt, 100});
  ASSERT_TRUE(chunk.ok()) << chunk.error;
  EXPECT_EQ(chunk.value->rows, (std::vector<Row>{{int64_t{2}, std::string("a")},
                                                  {int64_t{1}, std::string("b")},
                                                  {int64_t{3}, std::string("c")}}));
  EXPECT_EQ(chunk.value->last_key, (KeyText{"c"}));
}

TEST(PgSnapshotReader, CompositeKeyChunksVisitEveryRowOnceInKeyOrderWithinTheBounds) {
  SnapshotFixture f;
  const std::string t = f.table("comp");
  pg_exec(f.pg, "CREATE TABLE " + t + " (a int, b text, v int NOT NULL, PRIMARY KEY (a, b));"
                "INSERT INTO " + t + " SELECT a, b, a * 10 + length(b) FROM generate_series(1, 12) a, "
                "unnest(ARRAY['a', 'B', 'b', 'a b', 'zz', 'it''s']) b");
  PgSnapshotReader reader(f.config());
  ASSERT_EQ(reader.connect(), std::nullopt);
  const auto described = reader.describe(t, {});
  ASSERT_TRUE(described.ok()) << described.error;
  const TableLayout& layout = *described.value;
  EXPECT_EQ(layout.key_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(layout.schema->key_columns, (std::vector<size_t>{0, 1}));

  const std::string where = "v % 3 <> 0";
  const auto max = reader.max_key(layout, where);
  ASSERT_TRUE(max.ok()) << max.error;
  ASSERT_TRUE(max.value->has_value());
  EXPECT_EQ(**max.value, (KeyText{"12", "zz"}));  // 12*10+2 = 122, not a multiple of 3

  const KeyText after{"2", "a b"}, upto{"11", "b"};
  const std::vector<std::string> expected = pg_query(
      f.pg, "SELECT a || '|' || b FROM " + t + " WHERE (a, b) > (2, 'a b') AND (a, b) <= (11, 'b') AND " + where +
                " ORDER BY a, b");
  ASSERT_GT(expected.size(), 30u);

  std::vector<std::string> seen;
  std::optional<KeyText> last = after;
  size_t chunks = 0;
  for (; chunks < 100; ++chunks) {
    const auto chunk = reader.read_chunk(ChunkQuery{&layout, where, last, upto, 7});
    ASSERT_TRUE(chunk.ok()) << chunk.error;
    ASSERT_LE(chunk.value->rows.size(), 7u);
    if (chunk.value->rows.empty()) {
      EXPECT_TRUE(chunk.value->last_key.empty());
      break;
    }
    for (const Row& row : chunk.value->rows) {
      ASSERT_EQ(row.size(), 3u);
      seen.push_back(text_of(row[0]) + "|" + text_of(row[1]));
    }
    const Row& tail = chunk.value->rows.back();
    EXPECT_EQ(chunk.value->last_key, (KeyText{text_of(tail[0]), text_of(tail[1])}));
    last = chunk.value->last_key;
  }
  EXPECT_EQ(seen, expected) << "each row once, in the database's key order, between the bounds";
  EXPECT_EQ(chunks, (expected.size() + 6) / 7);

  // No bounds and no condition: the whole table.
  const auto all = reader.read_chunk(ChunkQuery{&layout, "", std::nullopt, std::nullopt, 1000});
  ASSERT_TRUE(all.ok()) << all.error;
  EXPECT_EQ(all.value->rows.size(), 72u);

  const auto bad_where = reader.read_chunk(ChunkQuery{&layout, "nosuch > 1", std::nullopt, std::nullopt, 7});
  ASSERT_FALSE(bad_where.ok());
  EXPECT_TRUE(contains(bad_where.error, "nosuch")) << bad_where.error;
  // The failed chunk's transaction is gone: the connection works on.
  EXPECT_TRUE(reader.read_chunk(ChunkQuery{&layout, "", std::nullopt, std::nullopt, 1}).ok());

  // A condition that fails only as the SELECT runs, in the middle of the chunk's pipelined statements: its
  // error, the transaction rolled back, the pipeline left; the next chunk reads on the same connection.
  const auto failing = reader.read_chunk(ChunkQuery{&layout, "100 / (a - 5) > 0", std::nullopt, std::nullopt, 1000});
  ASSERT_FALSE(failing.ok());
  EXPECT_TRUE(contains(failing.error, "division by zero")) << failing.error;
  const auto after_failure = reader.read_chunk(ChunkQuery{&layout, "", std::nullopt, std::nullopt, 1000});
  ASSERT_TRUE(after_failure.ok()) << after_failure.error;
  EXPECT_EQ(after_failure.value->rows.size(), 72u);
}

TEST(PgSnapshotReader, MaxKeyWithAndWithoutRowsAndRefusingNullKeys) {
  SnapshotFixture f;
  const std::string keyed = f.table("mk"), nullable = f.table("nk");
  pg_exec(f.pg, "CREATE TABLE " + keyed + " (id bigint PRIMARY KEY);"
                "CREATE TABLE " + nullable + " (code text, v int);"
                "INSERT INTO " + nullable + " VALUES ('x', 1), ('y', 2), (NULL, 3)");
  PgSnapshotReader reader(f.config());
  ASSERT_EQ(reader.connect(), std::nullopt);

  const auto empty = reader.describe(keyed, {});
  ASSERT_TRUE(empty.ok()) << empty.error;
  const auto none = reader.max_key(*empty.value, "");
  ASSERT_TRUE(none.ok()) << none.error;
  EXPECT_FALSE(none.value->has_value()) << "an empty table has no largest key";
  pg_exec(f.pg, "INSERT INTO " + keyed + " VALUES (-5), (9000000000), (7)");
  const auto some = reader.max_key(*empty.value, "");
  ASSERT_TRUE(some.ok()) << some.error;
  ASSERT_TRUE(some.value->has_value());
  EXPECT_EQ(**some.value, (KeyText{"9000000000"}));
  const auto filtered = reader.max_key(*empty.value, "id < 8");
  ASSERT_TRUE(filtered.ok()) << filtered.error;
  EXPECT_EQ(**filtered.value, (KeyText{"7"}));

  const auto described = reader.describe(nullable, {"code"});
  ASSERT_TRUE(described.ok()) << described.error;
  const auto refused = reader.max_key(*described.value, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(contains(refused.error, "NULL") && contains(refused.error, "code")) << refused.error;
  const auto outside_nulls = reader.max_key(*described.value, "v < 3");
  ASSERT_TRUE(outside_nulls.ok()) << outside_nulls.error;
  EXPECT_EQ(**outside_nulls.value, (KeyText{"y"}));
  const auto no_match = reader.max_key(*described.value, "v > 100");
  ASSERT_TRUE(no_match.ok()) << no_match.error;
  EXPECT_FALSE(no_match.value->has_value());
}

// What PostgresSource decoded for a table: its schema and the newest image of each row, by the row's id.
struct Logged {
  TableSchemaPtr schema;
  std::map<int64_t, Row> newest;
};

// Runs PostgresSource, calls `write` once it streams, collects `count` inserts and updates, stops it and
// drops its slot: what pgoutput delivers for the rows `write` stores.
std::map<std::string, Logged> capture_log(SnapshotFixture& f, const Config& config, const std::function<void()>& write,
                                          size_t count) {
  std::map<std::string, Logged> logged;
  pg::PostgresSource source(config);
  EventQueue queue(100000, size_t{1} << 30, [](const StreamItem& item) { return approximate_bytes(item); });
  SourceOutcome outcome;
  size_t changes = 0;
  const std::string slot_active = "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + f.slot() + "' AND active";
  {
    std::jthread runner([&](std::stop_token stop) { outcome = source.run(std::nullopt, queue, stop); });
    const auto slot_deadline = std::chrono::steady_clock::now() + 30s;
    while (pg_query(f.admin, slot_active).empty() && std::chrono::steady_clock::now() < slot_deadline)
      std::this_thread::sleep_for(100ms);
    if (pg_query(f.admin, slot_active).empty()) {
      ADD_FAILURE() << "the source never streamed";
      return logged;
    }
    write();
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    std::vector<StreamItem> items;
    while (changes < count && std::chrono::steady_clock::now() < deadline) {
      items.clear();
      queue.pop_batch(items, 100, 100ms);
      for (const auto& item : items) {
        const auto* e = std::get_if<ChangeEvent>(&item);
        if (!e || !e->after) continue;
        Logged& table = logged[e->table->id.table];
        table.schema = e->table;
        const auto id = std::find(e->table->columns.begin(), e->table->columns.end(), "id") - e->table->columns.begin();
        table.newest[std::get<int64_t>((*e->after)[static_cast<size_t>(id)].v)] = *e->after;
        ++changes;
      }
    }
  }
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(changes, count);
  // The walsender may hold the slot a moment after the source's connection closed.
  const auto release_deadline = std::chrono::steady_clock::now() + 10s;
  while (!pg_query(f.admin, slot_active).empty() && std::chrono::steady_clock::now() < release_deadline)
    std::this_thread::sleep_for(100ms);
  pg_exec(f.admin, "SELECT pg_drop_replication_slot('" + f.slot() + "')");
  return logged;
}

// Describes `table` and reads it in one chunk: the schema and every row must equal the log's, the rows in key
// order `ids`, with the chunk key `key_names`.
void expect_chunk_equals_log(PgSnapshotReader& reader, const std::string& table, const Logged& log,
                             const std::vector<std::string>& key_names, const std::vector<int64_t>& ids) {
  SCOPED_TRACE(table);
  ASSERT_TRUE(log.schema) << "the log delivered nothing";
  const auto described = reader.describe(table, {});
  ASSERT_TRUE(described.ok()) << described.error;
  const TableLayout& layout = *described.value;
  EXPECT_EQ(layout.schema->id, log.schema->id);
  EXPECT_EQ(layout.schema->columns, log.schema->columns) << "exactly the columns pgoutput sends";
  EXPECT_EQ(layout.key_names, key_names);
  // Snapshot records carry the log's Kafka key, field for field (same partition as the row's log records).
  EXPECT_EQ(layout.schema->key_columns, log.schema->key_columns) << "the log's record key";
  EXPECT_EQ(layout.schema->complete_old_image, log.schema->complete_old_image);

  const auto chunk = reader.read_chunk(ChunkQuery{&layout, "", std::nullopt, std::nullopt, 100});
  ASSERT_TRUE(chunk.ok()) << chunk.error;
  ASSERT_EQ(chunk.value->rows.size(), ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    const Row& selected = chunk.value->rows[r];
    ASSERT_TRUE(log.newest.count(ids[r])) << "id " << ids[r];
    const Row& logged = log.newest.at(ids[r]);
    ASSERT_EQ(selected.size(), logged.size());
    for (size_t c = 0; c < selected.size(); ++c) {
      EXPECT_TRUE(same(selected[c], logged[c])) << "id " << ids[r] << " column " << layout.schema->columns[c]
                                                << ": SELECT " << show(selected[c]) << ", log " << show(logged[c]);
      // operator== itself wherever no NaN is involved.
      const auto* d = std::get_if<double>(&logged[c].v);
      if (!(d && std::isnan(*d))) {
        EXPECT_TRUE(selected[c] == logged[c]) << "id " << ids[r] << " column " << layout.schema->columns[c];
      }
    }
  }
}

// The oracle: PostgresSource decodes pgoutput's rows; the chunk SELECT must give exactly the same values.
TEST(PgSnapshotReader, ChunkRowsEqualTheRowsPgoutputDeliversValueForValue) {
  SnapshotFixture f;
  const std::string mood = "mood_" + f.suffix, posint = "posint_" + f.suffix;
  f.drops.push_back("DROP TYPE IF EXISTS " + mood + ", " + posint);  // after the table's drop
  const std::string t = f.table("types");
  pg_exec(f.pg, "CREATE TYPE " + mood + " AS ENUM ('sad', 'ok', 'happy'); CREATE DOMAIN " + posint +
                    " AS int CHECK (VALUE > 0)");
  // The key's order (k, id) differs from the column order (id, ..., k).
  pg_exec(f.pg, "CREATE TABLE " + t + " (id int, c_int2 int2, c_int4 int4, c_int8 int8, c_num numeric(20,6), c_numfree numeric, "
                "c_text text, c_varchar varchar(20), c_bpchar char(6), c_bool bool, c_bytea bytea, c_date date, c_time time, "
                "c_timetz timetz, c_ts timestamp, c_tstz timestamptz, c_interval interval, c_json json, c_jsonb jsonb, "
                "c_uuid uuid, c_f4 float4, c_f8 float8, c_intarr int[], c_textarr text[], c_mood " + mood + ", c_moodarr " +
                mood + "[], c_dom " + posint + ", c_money money, c_inet inet, c_gone int, c_gen int GENERATED ALWAYS AS "
                "(c_int2 * 2) STORED, c_f8arr float8[], k text, PRIMARY KEY (k, id));"
                "ALTER TABLE " + t + " DROP COLUMN c_gone");

  const Config config = f.config();
  const std::string columns = "(id, c_int2, c_int4, c_int8, c_num, c_numfree, c_text, c_varchar, c_bpchar, c_bool, c_bytea, "
                              "c_date, c_time, c_timetz, c_ts, c_tstz, c_interval, c_json, c_jsonb, c_uuid, c_f4, c_f8, "
                              "c_intarr, c_textarr, c_mood, c_moodarr, c_dom, c_money, c_inet, c_f8arr, k)";
  auto logged = capture_log(f, config, [&] {
    pg_exec(f.pg, "INSERT INTO " + t + " " + columns + " VALUES "
                  "(1, 12, 123456, 1234567890123, 12345.678901, 3.14159265358979323846264338327950288, 'plain', 'var', 'ab', "
                  "true, '\\x00ff10', '2026-03-04', '13:14:15.123456', '13:14:15+02:30', '2026-03-04 05:06:07.5', "
                  "'2026-03-04 05:06:07.654321+01', '1 year 2 mons 3 days 04:05:06.789', '{\"b\": 1,  \"a\": [1, 2]}', "
                  "'{\"b\": 1,  \"a\": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.1, 0.1, '{1,NULL,3}', "
                  "'{\"x\",NULL,\"y,z\",\"q\\\"uote\"}', 'happy', '{sad,happy}', 42, 1234.56, '192.168.0.1/24', "
                  "'{1.5,-0.0,1e-300}', 'b'),"
                  "(2, -32768, -2147483648, -9223372036854775808, 'NaN', '-0.000001', 'ünïcødé \\ ''q'' \t tab', '', '', "
                  "false, '', 'infinity', '00:00:00', '23:59:59.999999-12', '-infinity', 'infinity', '-1 days -00:00:01', "
                  "'[]', '{}', '00000000-0000-0000-0000-000000000000', 'NaN', '-Infinity', '{}', '{{\"a\",\"b\"},{\"c\",NULL}}', "
                  "'sad', '{}', 1, -0.01, '::1', '{Infinity,-Infinity}', 'a'),"
                  "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                  "NULL, NULL, 'Infinity', 1e308, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'c')");
    pg_exec(f.pg, "UPDATE " + t + " SET c_text = 'updated', c_f8 = 5e-324, c_date = '0001-01-01 BC' WHERE id = 1");
  }, 4);  // inserts of 1, 2, 3, then the update of 1

  PgSnapshotReader reader(config);
  ASSERT_EQ(reader.connect(), std::nullopt);
  // Key order k = 'a', 'b', 'c' is id 2, 1, 3.
  expect_chunk_equals_log(reader, t, logged[t], {"k", "id"}, {2, 1, 3});
  const auto chunk = reader.read_chunk(ChunkQuery{nullptr, "", std::nullopt, std::nullopt, 10});
  EXPECT_FALSE(chunk.ok());
}

// Key order under REPLICA IDENTITY FULL (the log keys by the primary key in key order), and a PostgreSQL 15
// publication column list (pgoutput leaves the other columns out).
TEST(PgSnapshotReader, KeyColumnsAndColumnsFollowTheLogUnderFullIdentityAndAColumnList) {
  SnapshotFixture f;
  const std::string full = f.table("full"), listed = f.table("listed");
  pg_exec(f.pg, "CREATE TABLE " + full + " (id int, v text, k text, PRIMARY KEY (k, id));"
                "ALTER TABLE " + full + " REPLICA IDENTITY FULL;"
                "CREATE TABLE " + listed + " (id int PRIMARY KEY, a text, secret text, b int);"
                "CREATE PUBLICATION " + f.slot() + " FOR TABLE " + full + ", " + listed + " (id, b, a)");
  const Config config = f.config();
  auto logged = capture_log(f, config, [&] {
    pg_exec(f.pg, "INSERT INTO " + full + " VALUES (1, 'x', 'b'), (2, 'y', 'a'); UPDATE " + full +
                      " SET v = 'z' WHERE id = 1; INSERT INTO " + listed + " VALUES (1, 'a', 's', 2), (2, NULL, 't', NULL)");
  }, 5);

  PgSnapshotReader reader(config);
  ASSERT_EQ(reader.connect(), std::nullopt);
  expect_chunk_equals_log(reader, full, logged[full], {"k", "id"}, {2, 1});
  // Under FULL the log keys by the primary key in key order, as the chunk key does: the same Kafka key.
  EXPECT_EQ(logged[full].schema ? logged[full].schema->key_columns : std::vector<size_t>{}, (std::vector<size_t>{2, 0}));
  const auto described = reader.describe(full, {});
  ASSERT_TRUE(described.ok()) << described.error;
  EXPECT_EQ(described.value->schema->key_columns, (std::vector<size_t>{2, 0}));
  expect_chunk_equals_log(reader, listed, logged[listed], {"id"}, {1, 2});
  EXPECT_EQ(logged[listed].schema ? logged[listed].schema->columns : std::vector<std::string>{},
            (std::vector<std::string>{"id", "a", "b"}));
}

}  // namespace
}  // namespace tidemark::test
