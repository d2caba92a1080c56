// The database sink's table plans: :column references, the expression check, the mapping's problems reported
// together, and the statement heads for both targets.

#include <gtest/gtest.h>

#include <memory>

#include "sink/database/table_plan.hpp"

namespace tidemark::dbsink {
namespace {

TableSchemaPtr legacy_customers() {
  auto s = std::make_shared<TableSchema>();
  s->id = TableId{"shop", "", "legacy_customers"};
  s->columns = {"id", "first_name", "last_name", "status"};
  s->key_columns = {0};
  return s;
}

TargetTable modern_customers() {
  TargetTable t;
  t.columns = {{"customer_id", "bigint", false}, {"full_name", "text", false}, {"status", "text", false},
               {"source_system", "text", false}, {"name_length", "integer", true}};
  t.primary_key = {"customer_id"};
  return t;
}

TEST(TablePlan, ColumnReferencesOutsideStringsAndCastsAreSourceValues) {
  const auto source = legacy_customers();
  const TemplateResult r = parse_template("concat(:first_name, ' :not_a_ref ', :last_name)::text", *source, Dialect::Postgres);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.sql.refs, (std::vector<size_t>{1, 2}));
  ASSERT_EQ(r.sql.text.size(), 3u);
  EXPECT_EQ(r.sql.text[0], "concat(");
  EXPECT_EQ(r.sql.text[1], ", ' :not_a_ref ', ");
  EXPECT_EQ(r.sql.text[2], ")::text");
}

TEST(TablePlan, ExpressionsAreCheckedLikeSignalConditions) {
  const auto source = legacy_customers();
  EXPECT_NE(parse_template(":id; DROP TABLE x", *source, Dialect::MySql).error.find("';' is not allowed"), std::string::npos);
  EXPECT_NE(parse_template("pg_sleep(10)", *source, Dialect::Postgres).error.find("function pg_sleep is not allowed"),
            std::string::npos);
  EXPECT_NE(parse_template("(SELECT 1)", *source, Dialect::Postgres).error.find("subqueries"), std::string::npos);
  EXPECT_NE(parse_template(":nope", *source, Dialect::Postgres).error.find(":nope is not a column"), std::string::npos);
  // A bare name is not a source value: the check asks for :column.
  EXPECT_NE(parse_template("status", *source, Dialect::Postgres).error.find("name source values as :column"), std::string::npos);
}

TEST(TablePlan, EveryProblemOfAMappingIsReportedAtOnce) {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.columns = {{"customer_id", "idd"}, {"nope", "status"}, {"name_length", "length(:first_name)"}, {"full_name", "lower(:x)"}};
  const PlanResult r = plan_table(Dialect::Postgres, legacy_customers(), &m, "public", "modern_customers", modern_customers());
  ASSERT_FALSE(r.plan);
  EXPECT_NE(r.error.find("customer_id: idd is not a column of the source table"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("the target table has no column nope"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("name_length is a generated column"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(":x is not a column"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("primary key column customer_id must be copied"), std::string::npos) << r.error;
}

TEST(TablePlan, ColumnByColumnWhenNoMappingAndTheTargetLacksOne) {
  const PlanResult r = plan_table(Dialect::MySql, legacy_customers(), nullptr, "shop2", "legacy_customers", modern_customers());
  ASSERT_FALSE(r.plan);
  EXPECT_NE(r.error.find("the target table has no column id"), std::string::npos) << r.error;
}

TableMapping modern_mapping() {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.target = "crm.modern_customers";
  m.where = ":status <> 'deleted'";
  m.columns = {{"customer_id", "id"}, {"full_name", "concat(:first_name, ' ', :last_name)"}, {"source_system", "'legacy'"}};
  return m;
}

TEST(TablePlan, ComputedColumnsGoThroughADerivedTableOnPostgres) {
  const TableMapping m = modern_mapping();
  const auto [schema, table] = target_of(legacy_customers()->id, &m, "public");
  EXPECT_EQ(schema, "crm");
  EXPECT_EQ(table, "modern_customers");
  const PlanResult r = plan_table(Dialect::Postgres, legacy_customers(), &m, schema, table, modern_customers());
  ASSERT_TRUE(r.plan) << r.error;
  const TablePlan& p = *r.plan;
  EXPECT_TRUE(p.derived);
  EXPECT_EQ(p.insert_head,
            "INSERT INTO \"crm\".\"modern_customers\" (\"customer_id\", \"full_name\", \"source_system\") SELECT v.\"id\", "
            "concat(v.\"first_name\", ' ', v.\"last_name\"), 'legacy' FROM (VALUES ");
  EXPECT_EQ(p.insert_tail,
            ") AS v(\"id\", \"first_name\", \"last_name\", \"status\") WHERE v.\"status\" <> 'deleted' ON CONFLICT "
            "(\"customer_id\") DO UPDATE SET \"full_name\" = EXCLUDED.\"full_name\", \"source_system\" = EXCLUDED.\"source_system\"");
  EXPECT_EQ(p.carried_types[0], "bigint");  // typed as the target column it is copied into
  EXPECT_EQ(p.leave_head, "DELETE FROM \"crm\".\"modern_customers\" AS tt USING (VALUES ");
  EXPECT_EQ(p.leave_tail, ") AS v(\"id\", \"first_name\", \"last_name\", \"status\") WHERE tt.\"customer_id\" = v.\"id\" AND "
                          "NOT coalesce((v.\"status\" <> 'deleted'), false)");
}

TEST(TablePlan, ComputedColumnsGoThroughAUnionOfSelectsOnMySql) {
  const TableMapping m = modern_mapping();
  const PlanResult r = plan_table(Dialect::MySql, legacy_customers(), &m, "crm", "modern_customers", modern_customers());
  ASSERT_TRUE(r.plan) << r.error;
  const TablePlan& p = *r.plan;
  EXPECT_EQ(p.row_separator, " UNION ALL ");
  EXPECT_EQ(p.insert_tail, ") AS v WHERE v.`status` <> 'deleted' ON DUPLICATE KEY UPDATE `customer_id` = "
                           "IF(`crm`.`modern_customers`.`customer_id` = VALUES(`customer_id`), "
                           "`crm`.`modern_customers`.`customer_id`, NULL), `full_name` = VALUES(`full_name`), "
                           "`source_system` = VALUES(`source_system`)");
  EXPECT_EQ(p.leave_head, "DELETE tt FROM `crm`.`modern_customers` AS tt JOIN (");
}

TEST(TablePlan, PlainCopiesUseAValuesList) {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.columns = {{"customer_id", "id"}, {"full_name", "last_name"}};
  const PlanResult r = plan_table(Dialect::Postgres, legacy_customers(), &m, "public", "modern_customers", modern_customers());
  ASSERT_TRUE(r.plan) << r.error;
  EXPECT_FALSE(r.plan->derived);
  EXPECT_EQ(r.plan->insert_head, "INSERT INTO \"public\".\"modern_customers\" (\"customer_id\", \"full_name\") VALUES ");
}

TEST(TablePlan, AGeneratedKeyIsLeftToTheTargetAndItsAbsenceIsAnError) {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.generated_key = true;
  m.columns = {{"full_name", "concat(:first_name, ' ', :last_name)"}, {"status", "status"}};
  TargetTable target = modern_customers();
  target.columns[0].fills_itself = true;  // customer_id: an identity
  const PlanResult r = plan_table(Dialect::Postgres, legacy_customers(), &m, "crm", "modern_customers", target);
  ASSERT_TRUE(r.plan) << r.error;
  EXPECT_TRUE(r.plan->generated_key);
  EXPECT_EQ(r.plan->generated_name, "\"customer_id\"");
  EXPECT_EQ(r.plan->key, (std::vector<size_t>{0}));  // the source's key pairs with it
  EXPECT_TRUE(r.plan->key_values.empty());
  EXPECT_EQ(r.plan->map_name, "shop.legacy_customers");
  EXPECT_EQ(r.plan->insert_head, "INSERT INTO \"crm\".\"modern_customers\" (\"full_name\", \"status\") ");

  // The key written by the mapping, or a key the target does not fill in: both refused.
  m.columns.emplace_back("customer_id", "id");
  target.columns[0].fills_itself = false;
  const PlanResult bad = plan_table(Dialect::MySql, legacy_customers(), &m, "crm", "modern_customers", target);
  ASSERT_FALSE(bad.plan);
  EXPECT_NE(bad.error.find("customer_id is the key the target generates"), std::string::npos) << bad.error;
  EXPECT_NE(bad.error.find("has no AUTO_INCREMENT"), std::string::npos) << bad.error;
}

TEST(TablePlan, ReferencesMustBeCopiedColumns) {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.columns = {{"customer_id", "id"}, {"full_name", "lower(:first_name)"}};
  m.references = {{"customer_id", "shop.parents"}, {"full_name", "shop.parents"}};
  const PlanResult r = plan_table(Dialect::Postgres, legacy_customers(), &m, "crm", "modern_customers", modern_customers());
  ASSERT_FALSE(r.plan);
  EXPECT_NE(r.error.find("references: full_name must be a written target column copied from a source column"),
            std::string::npos) << r.error;
  m.references.erase("full_name");
  const PlanResult ok = plan_table(Dialect::Postgres, legacy_customers(), &m, "crm", "modern_customers", modern_customers());
  ASSERT_TRUE(ok.plan) << ok.error;
  EXPECT_TRUE(ok.plan->references);
  EXPECT_EQ(ok.plan->values[0].reference, "shop.parents");
  EXPECT_EQ(ok.plan->carried_references[0], "shop.parents");  // the derived table carries the translated key
}

TEST(TablePlan, ReferencedTablesAreSnapshottedFirst) {
  TableMapping customers;
  customers.source = "shop.customers";
  customers.generated_key = true;
  TableMapping orders;
  orders.source = "shop.orders";
  orders.references = {{"customer_id", "shop.customers"}};
  TableMapping items;
  items.source = "shop.items";
  items.generated_key = true;
  items.references = {{"order_id", "shop.orders"}};
  std::vector<TableId> tables = {TableId{"shop", "", "items"}, TableId{"shop", "", "audit"}, TableId{"shop", "", "orders"},
                                 TableId{"shop", "", "customers"}};
  order_referenced_first(tables, {items, orders, customers});
  std::vector<std::string> names;
  for (const auto& t : tables) names.push_back(t.table);
  EXPECT_EQ(names, (std::vector<std::string>{"audit", "customers", "orders", "items"}));
}

TEST(TablePlan, AVersionColumnGuardsTheUpsertOnBothTargets) {
  TableMapping m;
  m.source = "shop.legacy_customers";
  m.columns = {{"customer_id", "id"}, {"status", "status"}, {"source_system", "first_name"}};
  m.version = "status";
  const PlanResult pg = plan_table(Dialect::Postgres, legacy_customers(), &m, "crm", "modern_customers", modern_customers(), false);
  ASSERT_TRUE(pg.plan) << pg.error;
  EXPECT_EQ(pg.plan->version, std::optional<size_t>(1));
  EXPECT_EQ(pg.plan->upsert_tail,
            " ON CONFLICT (\"customer_id\") DO UPDATE SET \"source_system\" = EXCLUDED.\"source_system\", \"status\" = "
            "EXCLUDED.\"status\" WHERE EXCLUDED.\"status\" > \"crm\".\"modern_customers\".\"status\"");
  // MySQL: each column keeps its value unless the incoming version is newer; the version is assigned last.
  const PlanResult my = plan_table(Dialect::MySql, legacy_customers(), &m, "crm", "modern_customers", modern_customers(), true);
  ASSERT_TRUE(my.plan) << my.error;
  EXPECT_EQ(my.plan->upsert_tail,
            " ON DUPLICATE KEY UPDATE `customer_id` = IF(`crm`.`modern_customers`.`customer_id` = VALUES(`customer_id`), "
            "`crm`.`modern_customers`.`customer_id`, NULL), `source_system` = IF(VALUES(`status`) >= "
            "`crm`.`modern_customers`.`status`, VALUES(`source_system`), `crm`.`modern_customers`.`source_system`), "
            "`status` = GREATEST(`crm`.`modern_customers`.`status`, VALUES(`status`))");
  m.version = "customer_id";
  const PlanResult key = plan_table(Dialect::MySql, legacy_customers(), &m, "crm", "modern_customers", modern_customers());
  ASSERT_FALSE(key.plan);
  EXPECT_NE(key.error.find("version: customer_id is part of the key"), std::string::npos) << key.error;
}

}  // namespace
}  // namespace tidemark::dbsink
