#include "config/source_kinds.hpp"

#include <set>

#include <gtest/gtest.h>

#include "config/settings.hpp"

namespace tidemark {
namespace {

TEST(SourceKinds, EveryRowIsAChoiceOfSourceTypeAndEveryChoiceHasARow) {
  const Setting* type = find_setting("source.type");
  ASSERT_NE(type, nullptr);
  std::set<std::string> rows;
  for (const SourceDescriptor& d : source_descriptors()) {
    EXPECT_TRUE(rows.insert(std::string(d.type)).second) << "two rows for " << d.type;
    EXPECT_EQ(&describe_source(d.kind), &d) << d.type;
  }
  EXPECT_EQ(std::set<std::string>(type->choices.begin(), type->choices.end()), rows);
}

TEST(SourceKinds, ADatabaseHasAUsualPortAndNamesItsTables) {
  for (const SourceDescriptor& d : source_descriptors()) {
    if (!d.is_database) continue;
    EXPECT_GT(d.default_port, 0) << d.type;
    EXPECT_FALSE(d.product.empty()) << d.type;
    if (d.qualifier == TableQualifier::Schema) {
      EXPECT_FALSE(d.default_schema.empty()) << d.type;
    }
    EXPECT_NE(d.topic_template.find("{table}"), std::string_view::npos) << d.type;
  }
}

TEST(SourceKinds, AnUnknownTypeSupportsNothingAndAnExplicitPortWins) {
  SourceConfig unknown;
  unknown.type = "oracle";
  EXPECT_FALSE(describe_source(unknown).is_database);
  EXPECT_EQ(source_port(unknown), 0);
  SourceConfig pg;
  pg.type = "postgres";
  EXPECT_EQ(source_port(pg), 5432);
  pg.port = 6543;
  EXPECT_EQ(source_port(pg), 6543);
}

}  // namespace
}  // namespace tidemark
