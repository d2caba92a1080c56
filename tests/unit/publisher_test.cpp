// Publisher over a real StdoutSink writing to a temporary file: records, tombstones, key changes, topic
// names, and when positions commit.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/position_tracker.hpp"
#include "sink/publisher.hpp"
#include "sink/stdout_sink.hpp"
#include "sink/topic_namer.hpp"

namespace tidemark {
namespace {

using nlohmann::json;

struct Record {
  std::string topic;
  json key;
  json value;
};

TableSchemaPtr make_table(std::vector<size_t> key, std::string table = "orders") {
  auto t = std::make_shared<TableSchema>();
  t->id = TableId{"inventory", "public", std::move(table)};
  t->columns = {"id", "name"};
  t->key_columns = std::move(key);
  return t;
}

Row row(int64_t id, std::string name) { return Row{id, std::move(name)}; }

ChangeEvent event(TableSchemaPtr table, Op op, std::optional<Row> before, std::optional<Row> after,
                  std::optional<std::string> resume = std::nullopt) {
  ChangeEvent e;
  e.table = std::move(table);
  e.op = op;
  e.before = std::move(before);
  e.after = std::move(after);
  e.source.connector = ConnectorKind::Postgres;
  if (resume) e.resume_position = SourcePosition{*resume};
  return e;
}

// A publisher, its stdout sink on a tmpfile() and the tracker they share.
class PublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    make(true);
  }
  void TearDown() override {
    publisher_.reset();
    sink_.reset();
    if (file_) std::fclose(file_);
  }

  void make(bool tombstones, std::optional<SourcePosition> start = std::nullopt) {
    publisher_.reset();
    sink_.reset();
    tracker_ = std::make_unique<PositionTracker>(std::move(start));
    sink_ = std::make_unique<StdoutSink>(file_, *tracker_);
    publisher_ = std::make_unique<Publisher>(
        PublisherOptions{"shop", "shop", "{prefix}.{database}.{table}", tombstones}, *sink_, *tracker_);
  }

  void make_with(PublisherOptions options) {
    publisher_.reset();
    sink_.reset();
    tracker_ = std::make_unique<PositionTracker>();
    sink_ = std::make_unique<StdoutSink>(file_, *tracker_);
    publisher_ = std::make_unique<Publisher>(std::move(options), *sink_, *tracker_);
  }

  bool publish(const ChangeEvent& e) { return publisher_->publish(StreamItem{e}); }

  // Everything written so far, one record per line.
  std::vector<Record> records() {
    EXPECT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
    std::vector<Record> out;
    std::rewind(file_);
    std::string line;
    for (int c; (c = std::fgetc(file_)) != EOF;) {
      if (c != '\n') {
        line += static_cast<char>(c);
        continue;
      }
      const json j = json::parse(line);
      EXPECT_EQ(j.size(), 3u) << line;
      out.push_back(Record{j.at("topic").get<std::string>(), j.at("key"), j.at("value")});
      line.clear();
    }
    EXPECT_TRUE(line.empty()) << "unterminated line: " << line;
    std::fseek(file_, 0, SEEK_END);
    return out;
  }

  std::FILE* file_ = nullptr;
  std::unique_ptr<PositionTracker> tracker_;
  std::unique_ptr<StdoutSink> sink_;
  std::unique_ptr<Publisher> publisher_;
};

TEST_F(PublisherTest, CreateIsOneRecord) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Create, std::nullopt, row(1, "a"))));
  const auto r = records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].topic, "shop.inventory.orders");
  EXPECT_EQ(r[0].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[0].value.at("op"), "c");
  EXPECT_TRUE(r[0].value.at("before").is_null());
  EXPECT_EQ(r[0].value.at("after"), json::parse(R"({"id":1,"name":"a"})"));
  EXPECT_EQ(r[0].value.at("source").at("name"), "shop");
  EXPECT_EQ(publisher_->records_sent(), 1u);
}

TEST_F(PublisherTest, UpdateWithSameKeyIsOneRecord) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, row(1, "a"), row(1, "b"))));
  const auto r = records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[0].value.at("op"), "u");
  EXPECT_EQ(r[0].value.at("before").at("name"), "a");
  EXPECT_EQ(r[0].value.at("after").at("name"), "b");
}

TEST_F(PublisherTest, UpdateWithoutOldImageOrWithUnavailableOldKeyIsOneUpdate) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, std::nullopt, row(3, "b"))));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, Row{Unavailable{}, std::string("a")}, row(4, "b"))));
  const auto r = records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].key, json::parse(R"({"id":3})"));
  EXPECT_EQ(r[0].value.at("op"), "u");
  EXPECT_TRUE(r[0].value.at("before").is_null());
  EXPECT_EQ(r[1].key, json::parse(R"({"id":4})"));
  EXPECT_EQ(r[1].value.at("op"), "u");
}

TEST_F(PublisherTest, DeleteIsFollowedByATombstone) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Delete, row(5, "gone"), std::nullopt)));
  const auto r = records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].key, json::parse(R"({"id":5})"));
  EXPECT_EQ(r[0].value.at("op"), "d");
  EXPECT_EQ(r[0].value.at("before"), json::parse(R"({"id":5,"name":"gone"})"));
  EXPECT_TRUE(r[0].value.at("after").is_null());
  EXPECT_EQ(r[1].topic, r[0].topic);
  EXPECT_EQ(r[1].key, json::parse(R"({"id":5})"));
  EXPECT_TRUE(r[1].value.is_null());
  EXPECT_EQ(publisher_->records_sent(), 2u);
}

TEST_F(PublisherTest, NoTombstoneWhenTurnedOff) {
  make(false);
  ASSERT_TRUE(publish(event(make_table({0}), Op::Delete, row(5, "gone"), std::nullopt)));
  const auto r = records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].value.at("op"), "d");
}

TEST_F(PublisherTest, KeyChangingUpdateBecomesDeleteTombstoneCreate) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, row(1, "a"), row(2, "b"), "p1")));
  const auto r = records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[0].value.at("op"), "d");
  EXPECT_EQ(r[0].value.at("before"), json::parse(R"({"id":1,"name":"a"})"));
  EXPECT_TRUE(r[0].value.at("after").is_null());
  EXPECT_EQ(r[1].key, json::parse(R"({"id":1})"));
  EXPECT_TRUE(r[1].value.is_null());
  EXPECT_EQ(r[2].key, json::parse(R"({"id":2})"));
  EXPECT_EQ(r[2].value.at("op"), "c");
  EXPECT_TRUE(r[2].value.at("before").is_null());
  EXPECT_EQ(r[2].value.at("after"), json::parse(R"({"id":2,"name":"b"})"));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"p1"});
}

TEST_F(PublisherTest, KeyChangingUpdateWithoutTombstones) {
  make(false);
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, row(1, "a"), row(2, "b"))));
  const auto r = records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].value.at("op"), "d");
  EXPECT_EQ(r[0].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[1].value.at("op"), "c");
  EXPECT_EQ(r[1].key, json::parse(R"({"id":2})"));
}

TEST_F(PublisherTest, TruncateHasANullKey) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Truncate, std::nullopt, std::nullopt)));
  const auto r = records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].key.is_null());
  EXPECT_EQ(r[0].value.at("op"), "t");
}

TEST_F(PublisherTest, TableWithoutKeyHasNullKeysAndNoTombstones) {
  const auto t = make_table({});
  ASSERT_TRUE(publish(event(t, Op::Create, std::nullopt, row(1, "a"))));
  ASSERT_TRUE(publish(event(t, Op::Update, row(1, "a"), row(2, "b"))));  // no key: cannot "change key"
  ASSERT_TRUE(publish(event(t, Op::Delete, row(2, "b"), std::nullopt)));
  const auto r = records();
  ASSERT_EQ(r.size(), 3u);
  for (const auto& rec : r) {
    EXPECT_TRUE(rec.key.is_null());
    EXPECT_FALSE(rec.value.is_null());  // a tombstone without a key would mean nothing
  }
  EXPECT_EQ(r[1].value.at("op"), "u");
  EXPECT_EQ(r[2].value.at("op"), "d");
}

TEST_F(PublisherTest, TopicsFollowTheTemplatePerTable) {
  ASSERT_TRUE(publish(event(make_table({0}, "orders"), Op::Create, std::nullopt, row(1, "a"))));
  ASSERT_TRUE(publish(event(make_table({0}, "order lines"), Op::Create, std::nullopt, row(1, "a"))));
  ASSERT_TRUE(publish(event(make_table({0}, "orders"), Op::Create, std::nullopt, row(2, "a"))));
  const auto r = records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].topic, "shop.inventory.orders");
  EXPECT_EQ(r[1].topic, "shop.inventory.order_lines");
  EXPECT_EQ(r[2].topic, "shop.inventory.orders");
}

TEST_F(PublisherTest, PositionCommitsOnlyWhenAcknowledged) {
  ASSERT_TRUE(publish(event(make_table({0}), Op::Create, std::nullopt, row(1, "a"), "p1")));
  EXPECT_EQ(tracker_->committed().position, std::nullopt);  // written, not yet flushed
  EXPECT_EQ(tracker_->in_flight(), 1u);
  ASSERT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"p1"});
  EXPECT_EQ(tracker_->in_flight(), 0u);

  // Events inside a transaction carry no position: nothing moves.
  const uint64_t generation = tracker_->committed().generation;
  ASSERT_TRUE(publish(event(make_table({0}), Op::Create, std::nullopt, row(2, "a"))));
  ASSERT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"p1"});
  EXPECT_EQ(tracker_->committed().generation, generation);
}

// How many records the sink takes before it flushes by itself: found by watching acknowledgements.
size_t automatic_flush_period(Publisher& publisher, PositionTracker& tracker, const TableSchemaPtr& table) {
  for (size_t n = 1; n <= 100000; ++n) {
    if (!publisher.publish(StreamItem{event(table, Op::Create, std::nullopt, row(static_cast<int64_t>(n), "x"))}))
      return 0;
    if (tracker.in_flight() == 0) return n;
  }
  return 0;
}

// The sink acknowledges on flush only. Arrange for its automatic flush to fall between the records of one
// event: the event's position must wait for the event's last record.
TEST_F(PublisherTest, PositionWaitsForTheLastRecordOfAKeyChangingUpdate) {
  const auto t = make_table({0});
  const size_t period = automatic_flush_period(*publisher_, *tracker_, t);
  ASSERT_GE(period, 3u) << "the stdout sink never flushed by itself";

  for (size_t i = 0; i + 2 < period; ++i)
    ASSERT_TRUE(publish(event(t, Op::Create, std::nullopt, row(1000 + static_cast<int64_t>(i), "x"))));
  ASSERT_EQ(tracker_->in_flight(), period - 2);
  // Delete(old) and tombstone fill the period and are flushed and acknowledged; create(new) is not.
  ASSERT_TRUE(publish(event(t, Op::Update, row(1, "a"), row(2, "b"), "after-key-change")));
  EXPECT_EQ(tracker_->in_flight(), 1u);
  EXPECT_EQ(tracker_->committed().position, std::nullopt);
  EXPECT_EQ(tracker_->committed().generation, 0u);
  ASSERT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"after-key-change"});
  EXPECT_EQ(tracker_->committed().generation, 1u);
}

TEST_F(PublisherTest, PositionWaitsForTheTombstoneOfADelete) {
  const auto t = make_table({0});
  const size_t period = automatic_flush_period(*publisher_, *tracker_, t);
  ASSERT_GE(period, 2u);
  for (size_t i = 0; i + 1 < period; ++i)
    ASSERT_TRUE(publish(event(t, Op::Create, std::nullopt, row(1000 + static_cast<int64_t>(i), "x"))));
  ASSERT_TRUE(publish(event(t, Op::Delete, row(1, "a"), std::nullopt, "after-delete")));
  EXPECT_EQ(tracker_->in_flight(), 1u);  // the tombstone
  EXPECT_EQ(tracker_->committed().position, std::nullopt);
  ASSERT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"after-delete"});
}

TEST_F(PublisherTest, CheckpointsAdvanceTheCommittedPosition) {
  make(true, SourcePosition{"start"});
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"start"});
  ASSERT_TRUE(publisher_->publish(StreamItem{Checkpoint{SourcePosition{"c1"}}}));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"c1"});  // nothing in flight: commits at once
  EXPECT_EQ(tracker_->committed().generation, 1u);

  // Behind an unacknowledged record, a checkpoint waits.
  ASSERT_TRUE(publish(event(make_table({0}), Op::Create, std::nullopt, row(1, "a"), "e1")));
  ASSERT_TRUE(publisher_->publish(StreamItem{Checkpoint{SourcePosition{"c2"}}}));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"c1"});
  ASSERT_TRUE(sink_->flush(std::chrono::milliseconds(1000)));
  EXPECT_EQ(tracker_->committed().position, SourcePosition{"c2"});
  EXPECT_EQ(records().size(), 1u);  // a checkpoint writes nothing
}

// ---- key_changed ----

TEST(KeyChanged, ComparesOnlyKeyColumns) {
  TableSchema t;
  t.columns = {"a", "b", "c"};
  t.key_columns = {0, 2};
  EXPECT_FALSE(key_changed(t, Row{int64_t{1}, int64_t{2}, int64_t{3}}, Row{int64_t{1}, int64_t{9}, int64_t{3}}));
  EXPECT_TRUE(key_changed(t, Row{int64_t{1}, int64_t{2}, int64_t{3}}, Row{int64_t{1}, int64_t{2}, int64_t{4}}));
  EXPECT_TRUE(key_changed(t, Row{int64_t{1}, int64_t{2}, int64_t{3}}, Row{int64_t{0}, int64_t{2}, int64_t{3}}));
  // Different types are different values.
  EXPECT_TRUE(key_changed(t, Row{int64_t{1}, Null{}, int64_t{3}}, Row{uint64_t{1}, Null{}, int64_t{3}}));
  EXPECT_TRUE(key_changed(t, Row{Null{}, Null{}, int64_t{3}}, Row{int64_t{1}, Null{}, int64_t{3}}));
}

TEST(KeyChanged, UnavailableOldKeyOrNoKeyIsNoChange) {
  TableSchema t;
  t.columns = {"a", "b"};
  t.key_columns = {0};
  EXPECT_FALSE(key_changed(t, Row{Unavailable{}, int64_t{1}}, Row{int64_t{5}, int64_t{1}}));
  EXPECT_FALSE(key_changed(t, Row{}, Row{int64_t{5}, int64_t{1}}));  // image too short to tell
  TableSchema keyless;
  keyless.columns = {"a"};
  EXPECT_FALSE(key_changed(keyless, Row{int64_t{1}}, Row{int64_t{2}}));
}

// ---- TopicNamer ----

TEST(TopicNamer, Placeholders) {
  const TableId id{"db", "sch", "tbl"};
  EXPECT_EQ(TopicNamer("pre", "{prefix}.{database}.{table}").topic_for(id), "pre.db.tbl");
  EXPECT_EQ(TopicNamer("pre", "{prefix}.{database}.{schema}.{table}").topic_for(id), "pre.db.sch.tbl");
  EXPECT_EQ(TopicNamer("pre", "cdc-{table}-{schema}").topic_for(id), "cdc-tbl-sch");
  EXPECT_EQ(TopicNamer("pre", "fixed").topic_for(id), "fixed");
  // Unknown placeholders stay as text, their braces replaced like any illegal character.
  EXPECT_EQ(TopicNamer("pre", "{prefix}.{other}").topic_for(id), "pre._other_");
}

TEST(TopicNamer, IllegalCharactersBecomeUnderscores) {
  EXPECT_EQ(TopicNamer("p", "{prefix}.{table}").topic_for(TableId{"d", "", "order items/2024"}), "p.order_items_2024");
  EXPECT_EQ(TopicNamer("p", "{prefix}.{table}").topic_for(TableId{"d", "", "a$b:c,d"}), "p.a_b_c_d");
  EXPECT_EQ(TopicNamer("my prefix", "{prefix}.{database}.{table}").topic_for(TableId{"d-1", "", "T_2"}), "my_prefix.d-1.T_2");
}

// As Debezium's topic-name sanitizer does (Java chars): one '_' per character, not one per UTF-8 byte.
TEST(TopicNamer, NonAsciiCharacterIsOneUnderscore) {
  EXPECT_EQ(TopicNamer("p", "{prefix}.{table}").topic_for(TableId{"d", "", "caf\xc3\xa9"}), "p.caf_");
  EXPECT_EQ(TopicNamer("p", "{prefix}.{table}").topic_for(TableId{"d", "", "\xe6\x97\xa5\xe6\x9c\xac"}), "p.__");
}

TEST(TopicNamer, EmptySchemaCollapsesDots) {
  const TableId mysql{"shop", "", "orders"};
  EXPECT_EQ(TopicNamer("p", "{prefix}.{database}.{schema}.{table}").topic_for(mysql), "p.shop.orders");
  EXPECT_EQ(TopicNamer("p", "{prefix}.{table}.{schema}").topic_for(mysql), "p.orders");
  EXPECT_EQ(TopicNamer("p", "{schema}.{table}").topic_for(mysql), "orders");
}

TEST(TopicNamer, LongNamesAreCutToKafkasLimit) {
  const std::string long_table(400, 'x');
  const std::string topic = TopicNamer("p", "{prefix}.{table}").topic_for(TableId{"d", "", long_table});
  EXPECT_EQ(topic.size(), 249u);
  EXPECT_EQ(topic.substr(0, 4), "p.xx");
}

// Debezium's ExtractNewRecordState: the after columns at the top level, add.fields as __name, deletes as
// delete.tombstone.handling.mode says. The expected values are Debezium's documented flat shapes.
PublisherOptions flat_options(FlatDeletes deletes, FlatFields fields) {
  PublisherOptions o{"shop", "shop", "{prefix}.{database}.{table}", true};
  o.flat = true;
  o.flat_fields = fields;
  o.flat_deletes = deletes;
  return o;
}

TEST_F(PublisherTest, FlatRecordsWithRewrittenDeletesAndAddedFields) {
  make_with(flat_options(FlatDeletes::Rewrite, FlatFields{.op = true, .table = true, .source_ts_ms = true, .deleted = true}));
  auto create = event(make_table({0}), Op::Create, std::nullopt, row(1, "a"), "p1");
  create.source.commit_ts_ms = 1700000000123;
  ASSERT_TRUE(publish(create));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, row(1, "a"), row(2, "b"), "p2")));  // a key change
  ASSERT_TRUE(publish(event(make_table({0}), Op::Delete, row(2, "b"), std::nullopt, "p3")));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Truncate, std::nullopt, std::nullopt, "p4")));
  const auto r = records();
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[0].value, json::parse(R"({"id":1,"name":"a","__op":"c","__table":"orders","__source_ts_ms":1700000000123,"__deleted":"false"})"));
  EXPECT_EQ(r[1].value, json::parse(R"({"id":1,"name":"a","__op":"d","__table":"orders","__source_ts_ms":0,"__deleted":"true"})"));
  EXPECT_TRUE(r[2].value.is_null()) << "the old key's tombstone";
  EXPECT_EQ(r[2].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(r[3].value.at("id"), 2);
  EXPECT_EQ(r[3].value.at("__op"), "c");
  EXPECT_EQ(r[4].value, json::parse(R"({"id":2,"name":"b","__op":"d","__table":"orders","__source_ts_ms":0,"__deleted":"true"})"));
  EXPECT_TRUE(r[5].value.is_null());
  EXPECT_EQ(tracker_->committed().position->token, "p4") << "a truncate sends nothing in flat records, and commits";
}

TEST_F(PublisherTest, FlatDeletesAsTombstonesOrDroppedStillCommitTheirPosition) {
  make_with(flat_options(FlatDeletes::Tombstone, FlatFields{}));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Update, row(1, "a"), row(1, "b"), "p1")));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Delete, row(1, "b"), std::nullopt, "p2")));
  auto r = records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].value, json::parse(R"({"id":1,"name":"b"})")) << "no fields asked for, none added";
  EXPECT_TRUE(r[1].value.is_null());
  EXPECT_EQ(r[1].key, json::parse(R"({"id":1})"));
  EXPECT_EQ(tracker_->committed().position->token, "p2");

  make_with(flat_options(FlatDeletes::Drop, FlatFields{.op = true}));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Create, std::nullopt, row(7, "x"), "q1")));
  ASSERT_TRUE(publish(event(make_table({0}), Op::Delete, row(7, "x"), std::nullopt, "q2")));
  r = records();
  ASSERT_EQ(r.size(), 3u) << "the earlier two, and the create: the delete is dropped";
  EXPECT_EQ(r[2].value, json::parse(R"({"id":7,"name":"x","__op":"c"})"));
  EXPECT_EQ(tracker_->committed().position->token, "q2") << "a dropped delete's position is committed";
}

}  // namespace
}  // namespace tidemark
