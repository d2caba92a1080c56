// The source-neutral snapshot parts: signal parsing (both data shapes), the persisted state, key
// equality, and the merge stage's window rules, driven with events as the sources produce them.

#include <gtest/gtest.h>

#include <memory>

#include "snapshot/control_tables.hpp"
#include "snapshot/key_codec.hpp"
#include "snapshot/signal.hpp"
#include "snapshot/snapshot_coordinator.hpp"
#include "snapshot/snapshot_merger.hpp"
#include "snapshot/snapshot_state.hpp"

namespace tidemark::snapshot {
namespace {

TEST(SnapshotSignal, TidemarkShapeWithWhereRangeAndChunkSize) {
  auto s = parse_signal("s1", "execute-snapshot",
                        R"({"tables": ["public.a", {"table": "public.b", "where": "x > 5", "after": [10], "upto": ["20"]}],
                            "chunk_size": 50})");
  ASSERT_TRUE(s.ok()) << s.error;
  ASSERT_EQ(s.value->tables.size(), 2u);
  EXPECT_EQ(s.value->tables[0].table, "public.a");
  EXPECT_EQ(s.value->tables[0].chunk_size, 50);
  EXPECT_EQ(s.value->tables[1].where, "x > 5");
  EXPECT_EQ(s.value->tables[1].after, (KeyText{std::string("10")}));
  EXPECT_EQ(s.value->tables[1].upto, (KeyText{std::string("20")}));
  EXPECT_EQ(s.value->tables[1].signal_id, "s1");
}

TEST(SnapshotSignal, DebeziumShapeWithAdditionalConditions) {
  auto s = parse_signal("d1", "execute-snapshot",
                        R"({"data-collections": ["inv.orders", "inv.items"], "type": "INCREMENTAL",
                            "additional-conditions": [{"data-collection": "inv.items", "filter": "color = 'blue'"}]})");
  ASSERT_TRUE(s.ok()) << s.error;
  ASSERT_EQ(s.value->tables.size(), 2u);
  EXPECT_EQ(s.value->tables[0].where, "");
  EXPECT_EQ(s.value->tables[1].where, "color = 'blue'");
}

TEST(SnapshotSignal, ErrorsNameTheProblem) {
  EXPECT_NE(parse_signal("e", "execute-snapshot", "{}").error.find("\"tables\""), std::string::npos);
  EXPECT_NE(parse_signal("e", "execute-snapshot", "not json").error.find("not a JSON object"), std::string::npos);
  EXPECT_NE(parse_signal("e", "explode", "{}").error.find("unknown type"), std::string::npos);
  EXPECT_NE(parse_signal("e", "execute-snapshot", R"({"data-collections": ["a"], "type": "blocking"})").error.find("incremental"),
            std::string::npos);
  EXPECT_TRUE(parse_signal("p", "pause-snapshot", "").ok());
  auto stop = parse_signal("s", "stop-snapshot", R"({"data-collections": ["a.b"]})");
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop.value->tables.size(), 1u);
}

// A poison row (the hardening review's 200,000-level JSON crashed the parser's copy with a stack overflow,
// and was read again after every restart) is refused, and so are rows too large to log or keep.
TEST(SnapshotSignal, RefusesDeepLargeAndOutOfRangeRows) {
  const std::string poison = std::string(200'000, '[') + std::string(200'000, ']');
  // In "after", the field the parser used to copy recursively (that copy overflowed the stack).
  EXPECT_FALSE(parse_signal("p", "execute-snapshot", R"({"tables": [{"table": "a", "after": )" + poison + "}]}").ok());
  const std::string deep = std::string(20'000, '[') + std::string(20'000, ']');  // within the size bound
  const auto nested = parse_signal("n", "execute-snapshot", R"({"tables": [{"table": "a", "after": )" + deep + "}]}");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error.find("nested deeper than 32"), std::string::npos) << nested.error.substr(0, 300);
  EXPECT_LT(nested.error.size(), 300u);
  // Brackets inside strings are text, not nesting.
  EXPECT_TRUE(parse_signal("s", "execute-snapshot", R"({"tables": [{"table": "a", "where": "c = '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['"}]})").ok());

  const auto big = parse_signal("b", "execute-snapshot", R"({"tables": ["a"], "where": ")" + std::string(10 << 20, 'x') + "\"}");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error.find("at most 65536"), std::string::npos) << big.error.substr(0, 300);
  EXPECT_LT(big.error.size(), 300u);
  EXPECT_FALSE(parse_signal(std::string(10'000, 'i'), "execute-snapshot", R"({"tables": ["a"]})").ok());
  EXPECT_LT(parse_signal("t", std::string(100'000, 't'), "{}").error.size(), 300u);
  const auto long_where = parse_signal("w", "execute-snapshot", R"({"tables": ["a"], "where": ")" + std::string(5000, 'x') + "\"}");
  EXPECT_NE(long_where.error.find("at most 4096"), std::string::npos) << long_where.error.substr(0, 300);
  const auto not_json = parse_signal("j", "execute-snapshot", std::string(60'000, '!'));
  EXPECT_LT(not_json.error.size(), 400u);

  for (const std::string size : {"1e30", "-1", "0", "2000000", "18446744073709551615", "1.5", "\"7\""}) {
    EXPECT_NE(parse_signal("c", "execute-snapshot", R"({"tables": ["a"], "chunk_size": )" + size + "}").error.find("chunk_size"),
              std::string::npos) << size;
    EXPECT_NE(parse_signal("c", "execute-snapshot", R"({"tables": [{"table": "a", "chunk_size": )" + size + "}]}").error.find("chunk_size"),
              std::string::npos) << size;
  }
  EXPECT_EQ(parse_signal("c", "execute-snapshot", R"({"tables": [{"table": "a", "chunk_size": 1000000}]})").value->tables[0].chunk_size,
            1'000'000);
}

TEST(SnapshotStateJson, RoundTripsEveryField) {
  SnapshotState s;
  TableRequest r;
  r.table = "public.t";
  r.where = "a = 1";
  r.after = KeyText{std::string("1"), std::nullopt};
  r.chunk_size = 7;
  r.signal_id = "x";
  s.queue.push_back(r);
  TableProgress p;
  p.request = r;
  p.last_key = KeyText{std::string("5"), std::string("b")};
  p.max_key = KeyText{std::string("9"), std::string("z")};
  p.first_key = KeyText{std::string("1"), std::string("a")};
  p.rows = 12;
  p.chunks = 2;
  p.started_ms = 1234;
  s.current = p;
  s.paused = true;
  s.remember_signal("x");
  s.tables_done = 3;
  s.rows_done = 99;
  s.last_error = "nope";
  auto back = snapshot_state_from_json(nlohmann::json::parse(to_json(s).dump()));
  ASSERT_TRUE(back.ok()) << back.error;
  EXPECT_EQ(*back.value, s);
  EXPECT_FALSE(snapshot_state_from_json(nlohmann::json::parse(R"({"current": {"rows": 1}})")).ok());
}

TEST(SnapshotKeyCodec, EqualExactlyWhenValuesAreEqual) {
  auto enc = [](const Row& row) {
    std::string out;
    EXPECT_TRUE(encode_key(row, {0, 1}, out));
    return out;
  };
  EXPECT_EQ(enc({Value(int64_t{1}), Value(std::string("ab"))}), enc({Value(int64_t{1}), Value(std::string("ab"))}));
  EXPECT_NE(enc({Value(std::string("ab")), Value(std::string("c"))}), enc({Value(std::string("a")), Value(std::string("bc"))}));
  EXPECT_NE(enc({Value(int64_t{1}), Value(std::string("abc"))}), enc({Value(int64_t{1}), Value(std::string("ABC"))}));
  EXPECT_NE(enc({Value(int64_t{1}), Value(Null{})}), enc({Value(int64_t{1}), Value(std::string())}));
  EXPECT_NE(enc({Value(int64_t{1}), Value(uint64_t{1})}), enc({Value(int64_t{1}), Value(int64_t{1})}));
  std::string out;
  EXPECT_FALSE(encode_key({Value(int64_t{1}), Value(Unavailable{})}, {0, 1}, out));
}

TEST(SnapshotControlTables, NamesResolvePerDatabaseAndJoinTheCapture) {
  Config pg;
  pg.source.type = "postgres";
  pg.source.database = "shop";
  pg.source.tables = {"public.orders"};
  pg.snapshot.watermark_table = "tidemark_watermark";
  pg.snapshot.signal_table = "ops.signals";
  const ControlTables t = control_tables(pg);
  EXPECT_EQ(t.watermark, (TableId{"shop", "public", "tidemark_watermark"}));
  EXPECT_EQ(t.signal, (TableId{"shop", "ops", "signals"}));
  EXPECT_EQ(with_control_tables(pg).source.tables,
            (std::vector<std::string>{"public.orders", "public.tidemark_watermark", "ops.signals"}));

  Config my;
  my.source.type = "mysql";
  my.source.tables = {"shop.orders", "crm.*"};
  my.snapshot.watermark_table = "tidemark_watermark";
  my.snapshot.signal_table = "tidemark_signal";
  // Without source.database the first table's database holds them.
  EXPECT_EQ(control_tables(my).watermark, (TableId{"shop", "", "tidemark_watermark"}));
  EXPECT_EQ(control_tables_problem(my), std::nullopt);
  EXPECT_EQ(with_control_tables(my).source.database, "shop");
  my.source.tables = {"*.orders"};
  ASSERT_TRUE(control_tables_problem(my).has_value());
  EXPECT_NE(control_tables_problem(my)->find("source.database"), std::string::npos);
  my.snapshot.enabled = false;
  EXPECT_EQ(control_tables_problem(my), std::nullopt);
}

// ---- merge stage ----

TableSchemaPtr schema_of(TableId id, std::vector<std::string> columns, std::vector<size_t> key) {
  auto s = std::make_shared<TableSchema>();
  s->id = std::move(id);
  s->columns = std::move(columns);
  s->key_columns = std::move(key);
  return s;
}

class MergeStage : public testing::Test {
 protected:
  const TableId items{"db", "public", "items"};
  const ControlTables control{{"db", "public", "tidemark_watermark"}, {"db", "public", "tidemark_signal"}};
  TableSchemaPtr items_schema = schema_of(items, {"id", "v"}, {0});
  TableSchemaPtr mark_schema = schema_of(control.watermark, {"pipeline", "mark"}, {0});
  TableSchemaPtr signal_schema = schema_of(control.signal, {"id", "type", "data", "created"}, {0});
  SnapshotCoordinator coordinator{SnapshotState{}};
  SnapshotMerger merger{"p1", control, coordinator};
  std::vector<StreamItem> out;
  int position = 0;

  SnapshotMerger::Emit emit() {
    return [this](const StreamItem& item) {
      out.push_back(item);
      return true;
    };
  }
  ChangeEvent event(TableSchemaPtr schema, Op op, std::optional<Row> before, std::optional<Row> after) {
    ChangeEvent e;
    e.table = std::move(schema);
    e.op = op;
    e.before = std::move(before);
    e.after = std::move(after);
    e.source.connector = ConnectorKind::MySql;
    e.resume_position = SourcePosition{"pos" + std::to_string(++position)};
    return e;
  }
  void feed(ChangeEvent e) {
    StreamItem item(std::move(e));
    ASSERT_TRUE(merger.process(item, emit()));
  }
  void mark(const std::string& pipeline, const std::string& m) {
    feed(event(mark_schema, Op::Update, std::nullopt, Row{Value(pipeline), Value(m)}));
  }
  Row item(int64_t id, int64_t v) { return Row{Value(id), Value(v)}; }
  // Starts a snapshot of `items` with the chunk rows 1..5 attached.
  void open_chunk() {
    coordinator.update([](SnapshotState& s) {
      TableProgress p;
      p.request.table = "public.items";
      p.max_key = KeyText{std::string("100")};
      s.current = p;
    });
    Window w;
    w.id = 1;
    w.table = items;
    w.key_names = {"id"};
    w.low = "L";
    w.high = "H";
    coordinator.open_window(std::move(w));
    mark("p1", "L");
    std::vector<Row> rows;
    for (int64_t i = 1; i <= 5; ++i) rows.push_back(item(i, 0));
    coordinator.attach_rows(1, items_schema, std::move(rows), KeyText{std::string("5")}, false);
  }
  // A further window of `items` (as the worker reads ahead): marks L<id>/H<id> (or `low`: a chained window's is
  // the previous high watermark), rows first..last.
  void open_next_window(uint64_t id, int64_t first, int64_t last, bool finished = false, const std::string& low = "") {
    Window w;
    w.id = id;
    w.table = items;
    w.key_names = {"id"};
    w.low = low.empty() ? "L" + std::to_string(id) : low;
    w.high = "H" + std::to_string(id);
    coordinator.open_window(std::move(w));
    std::vector<Row> rows;
    for (int64_t i = first; i <= last; ++i) rows.push_back(item(i, 0));
    coordinator.attach_rows(id, items_schema, std::move(rows), KeyText{std::to_string(last)}, finished);
  }
  std::vector<int64_t> read_ids() const {
    std::vector<int64_t> ids;
    for (const auto& i : out)
      if (const auto* e = std::get_if<ChangeEvent>(&i); e && e->op == Op::Read) ids.push_back(std::get<int64_t>((*e->after)[0].v));
    return ids;
  }
};

TEST_F(MergeStage, DropsRowsTouchedBetweenTheWatermarksAndEmitsTheRestAtTheHighWatermark) {
  feed(event(items_schema, Op::Update, item(1, 0), item(1, 1)));  // before the window: passes, not recorded
  open_chunk();
  feed(event(items_schema, Op::Update, item(2, 0), item(2, 1)));
  feed(event(items_schema, Op::Delete, item(3, 0), std::nullopt));
  feed(event(items_schema, Op::Update, item(4, 0), item(40, 1)));  // key change: both sides
  mark("other-pipeline", "H");                                     // not ours
  EXPECT_TRUE(read_ids().empty());
  mark("p1", "H");
  EXPECT_EQ(read_ids(), (std::vector<int64_t>{1, 5}));
  // Watermark rows are consumed; their positions go on as checkpoints, stamped with the new state.
  size_t published_events = 0;
  for (const auto& i : out)
    if (const auto* e = std::get_if<ChangeEvent>(&i)) {
      EXPECT_NE(e->table->id, control.watermark);
      if (e->op != Op::Read) ++published_events;
    }
  EXPECT_EQ(published_events, 4u);
  const auto* last = std::get_if<Checkpoint>(&out.back());
  ASSERT_NE(last, nullptr);
  ASSERT_NE(last->position.snapshot_state, nullptr);
  auto state = snapshot_state_from_json(nlohmann::json::parse(*last->position.snapshot_state));
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state.value->current->last_key, (KeyText{std::string("5")}));
  EXPECT_EQ(state.value->current->rows, 2u);
}

TEST_F(MergeStage, ReadRowsComeBeforeAnyLaterLogEvent) {
  open_chunk();
  mark("p1", "H");
  feed(event(items_schema, Op::Update, item(1, 0), item(1, 1)));
  ASSERT_GE(out.size(), 2u);
  const auto* after_last = std::get_if<ChangeEvent>(&out.back());
  ASSERT_NE(after_last, nullptr);
  EXPECT_EQ(after_last->op, Op::Update);
  EXPECT_EQ(read_ids().size(), 5u);
}

TEST_F(MergeStage, AnEventWhoseKeyIsUnknownMakesTheChunkBeReadAgain) {
  open_chunk();
  feed(event(items_schema, Op::Update, Row{Value(Unavailable{}), Value(int64_t{1})}, item(9, 1)));
  mark("p1", "H");
  EXPECT_TRUE(read_ids().empty());
  EXPECT_FALSE(coordinator.state().current->last_key.has_value()) << "the chunk is redone from the same key";
}

TEST_F(MergeStage, WindowsInFlightEachDropTheirOwnTouchedRowsAndEmitInOrder) {
  open_chunk();                    // window 1: rows 1..5, L already seen
  open_next_window(2, 6, 10);      // read ahead: its marks come later in the log
  feed(event(items_schema, Op::Update, item(7, 0), item(7, 1)));  // before L2: not window 2's business
  feed(event(items_schema, Op::Update, item(2, 0), item(2, 1)));  // in window 1
  mark("p1", "H");
  EXPECT_EQ(read_ids(), (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_EQ(coordinator.state().current->last_key, (KeyText{std::string("5")}));
  EXPECT_EQ(coordinator.windows_open(), 1u);
  mark("p1", "L2");
  feed(event(items_schema, Op::Delete, item(9, 0), std::nullopt));  // in window 2
  mark("p1", "H2");
  EXPECT_EQ(read_ids(), (std::vector<int64_t>{1, 3, 4, 5, 6, 7, 8, 10}))
      << "7 changed before window 2's low watermark: its chunk row is current";
  EXPECT_EQ(coordinator.state().current->last_key, (KeyText{std::string("10")}));
  EXPECT_EQ(coordinator.windows_open(), 0u);
  EXPECT_EQ(coordinator.restarts(), 0u);
}

TEST_F(MergeStage, AChainedWindowOpensAtThePreviousHighWatermark) {
  open_chunk();                              // window 1: rows 1..5, marks L / H
  open_next_window(2, 6, 10, true, "H");     // window 2 shares H as its low watermark (one commit for both)
  feed(event(items_schema, Op::Update, item(7, 0), item(7, 1)));  // before H: chunk 2 was read after it
  feed(event(items_schema, Op::Update, item(3, 0), item(3, 1)));  // in window 1
  mark("p1", "H");
  EXPECT_EQ(read_ids(), (std::vector<int64_t>{1, 2, 4, 5}));
  feed(event(items_schema, Op::Update, item(8, 0), item(8, 1)));  // after H: in window 2
  feed(event(items_schema, Op::Delete, item(2, 1), std::nullopt));  // window 1 is closed: passes
  mark("p1", "H2");
  EXPECT_EQ(read_ids(), (std::vector<int64_t>{1, 2, 4, 5, 6, 7, 9, 10}))
      << "8 changed between the shared mark and H2; 7 changed before the shared mark";
  EXPECT_EQ(coordinator.windows_open(), 0u);
  EXPECT_EQ(coordinator.restarts(), 0u);
  EXPECT_EQ(coordinator.state().tables_done, 1u);
}

TEST_F(MergeStage, ARedoneWindowClosesTheWindowsReadAfterIt) {
  open_chunk();
  open_next_window(2, 6, 10);
  open_next_window(3, 11, 15);
  feed(event(items_schema, Op::Truncate, std::nullopt, std::nullopt));  // window 1 cannot know what is gone
  mark("p1", "H");
  EXPECT_TRUE(read_ids().empty());
  EXPECT_EQ(coordinator.windows_open(), 0u) << "windows 2 and 3 start after window 1's last key";
  EXPECT_EQ(coordinator.restarts(), 1u);
  mark("p1", "L2");
  mark("p1", "H2");
  EXPECT_TRUE(read_ids().empty()) << "a closed window's marks are ignored";
  EXPECT_FALSE(coordinator.state().current->last_key.has_value()) << "read again from the last emitted key";
}

TEST_F(MergeStage, AHighWatermarkOvertakingAnOlderWindowRedoesBoth) {
  open_chunk();
  open_next_window(2, 6, 10);
  mark("p1", "L2");
  mark("p1", "H2");  // window 1's H never came: the order of the windows is broken
  EXPECT_TRUE(read_ids().empty());
  EXPECT_EQ(coordinator.windows_open(), 0u);
}

TEST_F(MergeStage, SignalsAreConsumedOnceAndChangeTheState) {
  auto signal = [&](const std::string& id, const std::string& type, const std::string& data) {
    feed(event(signal_schema, Op::Create, std::nullopt, Row{Value(id), Value(type), Value(data), Value(Null{})}));
  };
  signal("a", "execute-snapshot", R"({"tables": ["public.items"]})");
  signal("a", "execute-snapshot", R"({"tables": ["public.items"]})");  // replayed after a restart
  EXPECT_EQ(coordinator.state().queue.size(), 1u);
  signal("b", "pause-snapshot", "");
  EXPECT_TRUE(coordinator.state().paused);
  signal("c", "resume-snapshot", "");
  EXPECT_FALSE(coordinator.state().paused);
  signal("d", "stop-snapshot", "{}");
  EXPECT_TRUE(coordinator.state().idle());
  signal("e", "execute-snapshot", "{]");
  EXPECT_NE(coordinator.state().last_error.find("signal e"), std::string::npos);
  for (const auto& i : out) EXPECT_TRUE(std::holds_alternative<Checkpoint>(i)) << "signal rows are not published";
}

TEST_F(MergeStage, ASignalNamingAnotherPipelineIsIgnored) {
  auto signal = [&](const std::string& id, const std::string& data) {
    feed(event(signal_schema, Op::Create, std::nullopt,
               Row{Value(id), Value(std::string("execute-snapshot")), Value(data), Value(Null{})}));
  };
  signal("x", R"({"tables": ["public.items"], "pipeline": "other"})");
  EXPECT_TRUE(coordinator.state().queue.empty());
  EXPECT_FALSE(coordinator.state().signal_processed("x"));
  signal("y", R"({"tables": ["public.items"], "pipeline": "p1"})");
  EXPECT_EQ(coordinator.state().queue.size(), 1u);
}

TEST_F(MergeStage, StateChangedOutsideTheLogGoesOutWithTheLastPositionAgain) {
  feed(event(items_schema, Op::Create, std::nullopt, item(1, 0)));
  const size_t before = out.size();
  ASSERT_TRUE(merger.flush_state(emit()));
  EXPECT_EQ(out.size(), before) << "nothing changed: nothing to flush";
  coordinator.update([](SnapshotState& s) { s.last_error = "refused"; });  // as the chunk worker does
  ASSERT_TRUE(merger.flush_state(emit()));
  ASSERT_EQ(out.size(), before + 1);
  const auto* checkpoint = std::get_if<Checkpoint>(&out.back());
  ASSERT_NE(checkpoint, nullptr);
  EXPECT_EQ(checkpoint->position.token, "pos1");
  ASSERT_NE(checkpoint->position.snapshot_state, nullptr);
  EXPECT_NE(checkpoint->position.snapshot_state->find("refused"), std::string::npos);
  ASSERT_TRUE(merger.flush_state(emit()));
  EXPECT_EQ(out.size(), before + 1);
}

TEST_F(MergeStage, AStopSignalInsideTheWindowDropsTheChunk) {
  open_chunk();
  feed(event(signal_schema, Op::Create, std::nullopt, Row{Value(std::string("s")), Value(std::string("stop-snapshot")), Value(std::string("{}")), Value(Null{})}));
  mark("p1", "H");
  EXPECT_TRUE(read_ids().empty());
}

TEST_F(MergeStage, AStopSignalCancelsTheQueryInFlightOfTheTableItDrops) {
  int cancelled = 0;
  coordinator.set_query_canceller([&] { ++cancelled; });
  auto signal = [&](const std::string& id, const std::string& type, const std::string& data) {
    feed(event(signal_schema, Op::Create, std::nullopt, Row{Value(id), Value(type), Value(data), Value(Null{})}));
  };
  signal("q", "execute-snapshot", R"({"tables": ["public.items", "public.other"]})");
  signal("s1", "stop-snapshot", R"({"tables": ["public.other"]})");  // not the next table: its query goes on
  EXPECT_EQ(cancelled, 0);
  signal("s2", "stop-snapshot", R"({"tables": ["public.items"]})");  // the next table, whose key query may run
  EXPECT_EQ(cancelled, 1);
  open_chunk();
  signal("s3", "stop-snapshot", "{}");
  EXPECT_EQ(cancelled, 2);
  coordinator.set_query_canceller(nullptr);
  coordinator.cancel_query();  // nothing registered: nothing happens
  EXPECT_EQ(cancelled, 2);
}

TEST_F(MergeStage, TheQueueIsBoundedSoSignalsCannotGrowTheStateWithoutEnd) {
  std::string tables;
  for (int i = 0; i < 900; ++i) tables += std::string(tables.empty() ? "" : ",") + "\"public.t" + std::to_string(i) + "\"";
  for (int n = 0; n < 11; ++n)
    feed(event(signal_schema, Op::Create, std::nullopt,
               Row{Value("q" + std::to_string(n)), Value(std::string("execute-snapshot")), Value("{\"tables\": [" + tables + "]}"), Value(Null{})}));
  EXPECT_EQ(coordinator.state().queue.size(), 9900u);
  feed(event(signal_schema, Op::Create, std::nullopt,
             Row{Value(std::string("last")), Value(std::string("execute-snapshot")), Value(std::string("{\"tables\": [\"a\", \"b\"]}")), Value(Null{})}));
  EXPECT_EQ(coordinator.state().queue.size(), 9900u + 2u) << "below the bound: accepted";
  feed(event(signal_schema, Op::Create, std::nullopt,
             Row{Value(std::string("over")), Value(std::string("execute-snapshot")), Value("{\"tables\": [" + tables + "]}"), Value(Null{})}));
  EXPECT_EQ(coordinator.state().queue.size(), 9902u);
  EXPECT_NE(coordinator.state().last_error.find("queue would hold more than 10000"), std::string::npos) << coordinator.state().last_error;
}

}  // namespace
}  // namespace tidemark::snapshot
