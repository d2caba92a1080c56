// Binlog positions: MariaDB GTID states, MySQL GTID sets, and the position token the state file stores.

#include <gtest/gtest.h>

#include "source/mysql/binlog_position.hpp"

namespace tidemark::mysql {
namespace {

TEST(MariaGtidState, ParsesUpdatesAndPrintsDomainsInOrder) {
  auto state = MariaGtidState::parse("1-2-9,0-1-105");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->to_string(), "0-1-105,1-2-9");
  state->update(0, 3, 106);  // a new primary in domain 0
  state->update(7, 1, 1);
  EXPECT_EQ(state->to_string(), "0-3-106,1-2-9,7-1-1");
  ASSERT_TRUE(MariaGtidState::parse(""));
  EXPECT_TRUE(MariaGtidState::parse("")->empty());
  EXPECT_EQ(MariaGtidState::parse(" 0-1-18446744073709551615 ")->to_string(), "0-1-18446744073709551615");
}

TEST(MariaGtidState, RejectsBadSyntaxAndRepeatedDomains) {
  for (const char* bad : {"0-1", "0-1-2-3", "a-1-2", "0-1-2,", "0-1-2,0-3-4", "0--2", "-1-1-1", "0-1-2x"})
    EXPECT_FALSE(MariaGtidState::parse(bad)) << bad;
}

TEST(MysqlGtidSet, MergesIntervalsWhateverTheOrder) {
  MysqlGtidSet set;
  const std::string a = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  const std::string b = "00000000-0000-0000-0000-000000000001";
  for (uint64_t g : {1, 2, 3, 7, 5, 6, 10}) set.add(a, g);
  set.add(b, 4);
  EXPECT_EQ(set.to_string(), b + ":4," + a + ":1-3:5-7:10");
  set.add(a, 4);
  set.add(a, 9);
  set.add(a, 8);
  EXPECT_EQ(set.to_string(), b + ":4," + a + ":1-10");
  EXPECT_TRUE(set.contains(a, 10));
  EXPECT_FALSE(set.contains(a, 11));
  EXPECT_FALSE(set.contains(b, 3));
}

TEST(MysqlGtidSet, ParsesServerTextAndRejectsNonsense) {
  auto set = MysqlGtidSet::parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:5-7:1-3:4, 00000000-0000-0000-0000-000000000001:2");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->to_string(), "00000000-0000-0000-0000-000000000001:2,3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7");
  for (const char* bad : {"3e11fa47:1-3", "3e11fa47-71ca-11e1-9e33-c80aa9429562", "3e11fa47-71ca-11e1-9e33-c80aa9429562:0",
                          "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-3", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-x"})
    EXPECT_FALSE(MysqlGtidSet::parse(bad)) << bad;
}

TEST(BinlogPosition, TokenRoundTripsAndRefusesOtherSources) {
  BinlogPosition p{Flavor::MariaDb, "0-1-105,1-2-9", "mysql-bin.000005", 1234};
  const SourcePosition token = p.to_source_position();
  EXPECT_EQ(token.token, "binlog:flavor=mariadb;gtid=0-1-105,1-2-9;file=mysql-bin.000005;pos=1234");
  EXPECT_EQ(BinlogPosition::parse(token), p);
  BinlogPosition m{Flavor::MySql, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7", "binlog.000002", 4};
  EXPECT_EQ(BinlogPosition::parse(m.to_source_position()), m);
  BinlogPosition no_gtid{Flavor::MariaDb, "", "mysql-bin.000001", 330};
  EXPECT_EQ(BinlogPosition::parse(no_gtid.to_source_position()), no_gtid);
  EXPECT_EQ(no_gtid.describe(), "mysql-bin.000001:330");
  EXPECT_EQ(p.describe(), "gtid 0-1-105,1-2-9 (mysql-bin.000005:1234)");

  for (const char* bad : {"pg:0/16B3748", "binlog:flavor=oracle;gtid=;file=a;pos=4", "binlog:flavor=mariadb;gtid=;file=a",
                          "binlog:flavor=mariadb;gtid=x;file=a;pos=4", "binlog:flavor=mariadb;gtid=;file=a;pos=-1",
                          "binlog:flavor=mariadb;gtid=;file=a;pos=4;extra=1", "binlog:"})
    EXPECT_FALSE(BinlogPosition::parse(SourcePosition{bad})) << bad;
}

}  // namespace
}  // namespace tidemark::mysql
