// The two-way echo filter: transactions that start with the peer's (or this pipeline's own) mark are
// dropped whole, end position included, except the peer's id map entries, which pass with the end;
// other marker changes never pass; everything else passes as is.

#include <gtest/gtest.h>

#include <memory>

#include "source/echo_filter.hpp"

namespace tidemark {
namespace {

TableSchemaPtr table(const std::string& name, std::vector<std::string> columns) {
  auto s = std::make_shared<TableSchema>();
  s->id = TableId{"shop", "", name};
  s->columns = std::move(columns);
  s->key_columns = {0};
  return s;
}

const TableSchemaPtr kMarker = table("tidemark_marker", {"pipeline", "transactions"});
const TableSchemaPtr kOrders = table("orders", {"id", "total"});
const TableSchemaPtr kIdMap = table("tidemark_id_map", {"pipeline", "source_table", "source_key", "target_key"});

StreamItem marker_update(const std::string& pipeline, bool minimal_after = false, bool last = false) {
  ChangeEvent e;
  e.table = kMarker;
  e.op = Op::Update;
  e.before = Row{Value(pipeline), Value(int64_t{1})};
  // A MINIMAL binlog image: the new image lacks the unchanged key.
  e.after = minimal_after ? Row{Value(Unavailable{}), Value(int64_t{2})} : Row{Value(pipeline), Value(int64_t{2})};
  if (last) e.resume_position = SourcePosition("after-marker");
  return e;
}

StreamItem order(int64_t id, const std::optional<std::string>& end = std::nullopt) {
  ChangeEvent e;
  e.table = kOrders;
  e.op = Op::Create;
  e.after = Row{Value(id), Value(int64_t{10})};
  if (end) e.resume_position = SourcePosition(*end);
  return e;
}

// An id map entry written by `pipeline`'s sink; shown as "tidemark_id_map:<target key>".
StreamItem entry(const std::string& pipeline, int64_t target_key, const std::optional<std::string>& end = std::nullopt) {
  ChangeEvent e;
  e.table = kIdMap;
  e.op = Op::Create;
  e.after = Row{Value(pipeline), Value(std::string("shop.customers")), Value(std::string("7")), Value(target_key)};
  if (end) e.resume_position = SourcePosition(*end);
  return e;
}

// What passes of `items`, as "orders:<id>", "orders:<id>@<end>" or "checkpoint@<end>".
std::vector<std::string> run(EchoFilter& filter, std::vector<StreamItem> items) {
  std::vector<std::string> out;
  for (auto& item : items) {
    if (!filter.pass(item)) continue;
    if (const auto* c = std::get_if<Checkpoint>(&item)) {
      out.push_back("checkpoint@" + c->position.token);
      continue;
    }
    const auto& e = std::get<ChangeEvent>(item);
    const size_t shown = e.table == kIdMap ? 3 : 0;
    out.push_back(e.table->id.table + ":" + std::to_string(std::get<int64_t>((*e.after)[shown].v)) +
                  (e.resume_position ? "@" + e.resume_position->token : ""));
  }
  return out;
}

TEST(EchoFilter, TheTransactionThePeerMarkedIsDroppedWholeWithItsEnd) {
  EchoFilter filter("shop.tidemark_marker", "shop.tidemark_id_map", "b_to_a", "a_to_b");
  EXPECT_EQ(run(filter, {order(1, "p1"), marker_update("b_to_a"), order(2), order(3, "p2"), order(4, "p3")}),
            (std::vector<std::string>{"orders:1@p1", "orders:4@p3"}));
  EXPECT_EQ(filter.dropped_transactions(), 1u);
}

TEST(EchoFilter, TheMarkIsFoundInTheOldImageWhenTheNewOneLacksIt) {
  EchoFilter filter("shop.tidemark_marker", "shop.tidemark_id_map", "b_to_a", "a_to_b");
  EXPECT_EQ(run(filter, {marker_update("b_to_a", true), order(2, "p2"), order(3, "p3")}),
            (std::vector<std::string>{"orders:3@p3"}));
}

TEST(EchoFilter, OwnMarksAreEchoesTooAndOtherPipelinesMarksOnlyVanish) {
  EchoFilter filter("shop.tidemark_marker", "shop.tidemark_id_map", "b_to_a", "a_to_b");
  // Its own sink writing into the database it reads (both directions in one database).
  EXPECT_EQ(run(filter, {marker_update("a_to_b"), order(1, "p1")}), std::vector<std::string>{});
  // A third pipeline's mark: its rows pass (they are not from the peer), the mark itself never does.
  EXPECT_EQ(run(filter, {marker_update("c_to_a"), order(2, "p2")}), (std::vector<std::string>{"orders:2@p2"}));
  // A transaction that only changed a marker row ends in a checkpoint.
  EXPECT_EQ(run(filter, {marker_update("c_to_a", false, true)}), (std::vector<std::string>{"checkpoint@after-marker"}));
}

TEST(EchoFilter, AnEchoEndingInACheckpointDropsTheCheckpoint) {
  EchoFilter filter("shop.tidemark_marker", "shop.tidemark_id_map", "b_to_a", "a_to_b");
  std::vector<StreamItem> items{marker_update("b_to_a"), StreamItem(Checkpoint{SourcePosition("p1")}), order(5, "p2")};
  EXPECT_EQ(run(filter, std::move(items)), (std::vector<std::string>{"orders:5@p2"}));
  // Outside an echo, checkpoints pass.
  std::vector<StreamItem> plain{StreamItem(Checkpoint{SourcePosition("p3")})};
  EXPECT_EQ(run(filter, std::move(plain)), (std::vector<std::string>{"checkpoint@p3"}));
}

TEST(EchoFilter, ThePeersIdMapEntriesInAnEchoPassAndTheEchoEndsAsACheckpoint) {
  EchoFilter filter("shop.tidemark_marker", "shop.tidemark_id_map", "b_to_a", "a_to_b");
  // The peer inserted a row (dropped) and its entry (passes); the end passes, so the entry is committed.
  EXPECT_EQ(run(filter, {marker_update("b_to_a"), order(1), entry("b_to_a", 100), order(2, "p1"), order(3, "p2")}),
            (std::vector<std::string>{"tidemark_id_map:100", "checkpoint@p1", "orders:3@p2"}));
  // The entry is the transaction's last change: it keeps the end.
  EXPECT_EQ(run(filter, {marker_update("b_to_a"), entry("b_to_a", 101, "p3"), order(4, "p4")}),
            (std::vector<std::string>{"tidemark_id_map:101@p3", "orders:4@p4"}));
  // Entries of other pipelines (this one's own, a third's) never pass in an echo; the echo is dropped whole.
  EXPECT_EQ(run(filter, {marker_update("b_to_a"), entry("a_to_b", 102), entry("c_to_a", 103), order(5, "p5")}),
            std::vector<std::string>{});
  // An echo without entries that ends in a Checkpoint stays dropped after one that had entries.
  std::vector<StreamItem> items{marker_update("b_to_a"), entry("b_to_a", 104), StreamItem(Checkpoint{SourcePosition("p6")}),
                                marker_update("b_to_a"), StreamItem(Checkpoint{SourcePosition("p7")})};
  EXPECT_EQ(run(filter, std::move(items)), (std::vector<std::string>{"tidemark_id_map:104", "checkpoint@p6"}));
  EXPECT_EQ(filter.dropped_transactions(), 5u);  // every echo counts, with entries or without
}

TEST(TwoWayTables, ThePeersTablesAreFoundInTheSourceDatabase) {
  Config config;
  config.two_way.marker_table = "tidemark_marker";
  config.sink.database.id_map_table = "tidemark_id_map";
  config.source.type = "postgres";
  EXPECT_EQ(marker_table_in_source(config), "public.tidemark_marker");
  EXPECT_EQ(id_map_table_in_source(config), "public.tidemark_id_map");
  config.source.type = "mysql";
  config.source.tables = {"shop.customers", "crm.people"};
  // Without source.database: the first captured table's database.
  EXPECT_EQ(marker_table_in_source(config), "shop.tidemark_marker");
  config.source.database = "legacy";
  EXPECT_EQ(marker_table_in_source(config), "legacy.tidemark_marker");
  config.two_way.marker_table = "sync.marks";
  EXPECT_EQ(marker_table_in_source(config), "sync.marks");
  EXPECT_EQ(id_map_table_in_source(config), "sync.tidemark_id_map") << "beside the marker table";
  EXPECT_TRUE(is_table(TableId{"sync", "", "marks"}, "sync.marks"));
  EXPECT_TRUE(is_table(TableId{"db", "sync", "marks"}, "sync.marks"));
  EXPECT_FALSE(is_table(TableId{"sync", "", "marks2"}, "sync.marks"));
  EXPECT_FALSE(is_table(TableId{"sync", "", "marks"}, "marks"));
}

}  // namespace
}  // namespace tidemark
