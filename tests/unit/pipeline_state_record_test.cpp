// The state topic's record (sink.kafka.exactly_once): what is written is what is read back, and a record
// that cannot be read is an error naming why, never a silent first start.

#include <gtest/gtest.h>

#include "sink/pipeline_state_record.hpp"

namespace tidemark {
namespace {

TEST(PipelineStateRecord, RoundTripsPositionSnapshotStateAndPartialTransaction) {
  PipelineStateRecord state;
  state.pipeline = "orders";
  state.source_type = "postgres";
  state.position = SourcePosition{"pg:0/16B3748"};
  state.extensions = {{"snapshot", {{"paused", true}, {"tables_done", 3}}}};
  state.partial = PartialTransaction{1234, "lsn 23803720 xid 771"};
  const DecodedStateRecord back = decode_state_record(encode_state_record(state));
  ASSERT_TRUE(back.state) << back.error;
  EXPECT_EQ(back.state->pipeline, "orders");
  EXPECT_EQ(back.state->source_type, "postgres");
  ASSERT_TRUE(back.state->position);
  EXPECT_EQ(back.state->position->token, "pg:0/16B3748");
  EXPECT_EQ(back.state->extensions, state.extensions);
  EXPECT_EQ(back.state->partial, state.partial);
}

TEST(PipelineStateRecord, AWholeTransactionHasNoPartialAndAFirstStartNoPosition) {
  PipelineStateRecord state;
  state.pipeline = "p";
  state.source_type = "mysql";
  const DecodedStateRecord back = decode_state_record(encode_state_record(state));
  ASSERT_TRUE(back.state) << back.error;
  EXPECT_FALSE(back.state->position);
  EXPECT_FALSE(back.state->partial);
}

TEST(PipelineStateRecord, UnreadableRecordsAreErrors) {
  EXPECT_NE(decode_state_record("not json").error.find("not valid"), std::string::npos);
  EXPECT_NE(decode_state_record(R"({"format": 7, "pipeline": "p", "source_type": "mysql"})").error.find("format"),
            std::string::npos);
  EXPECT_FALSE(decode_state_record(R"({"format": 1, "source_type": "mysql"})").state);
  EXPECT_FALSE(decode_state_record(R"({"format": 1, "pipeline": "p", "source_type": "mysql", "partial": {"changes": 3}})").state);
}

TEST(PipelineStateRecord, ChangeIdentityNamesTheChangesPlaceInTheLog) {
  ChangeEvent pg;
  pg.source.connector = ConnectorKind::Postgres;
  pg.source.lsn = 100;
  pg.source.txid = 7;
  ChangeEvent pg_next = pg;
  pg_next.source.lsn = 140;
  EXPECT_NE(change_identity(pg), change_identity(pg_next));
  ChangeEvent my;
  my.source.connector = ConnectorKind::MySql;
  my.source.file = "mysql-bin.000003";
  my.source.pos = 4711;
  my.source.row = 0;
  ChangeEvent my_row = my;
  my_row.source.row = 1;
  EXPECT_NE(change_identity(my), change_identity(my_row));
  EXPECT_EQ(change_identity(my), "mysql-bin.000003:4711 row 0");
}

}  // namespace
}  // namespace tidemark
