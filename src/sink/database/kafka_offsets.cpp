#include "sink/database/kafka_offsets.hpp"

#include <charconv>

namespace tidemark::dbsink {

std::optional<std::pair<std::string, int32_t>> split_partition_name(const std::string& name) {
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  int32_t partition = 0;
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(name.data() + slash + 1, end, partition);
  if (ec != std::errc() || ptr != end || partition < 0) return std::nullopt;
  return std::make_pair(name.substr(0, slash), partition);
}

KafkaOffsetsTable::KafkaOffsetsTable(const DatabaseSinkConfig& config, const std::string& group)
    : where_(config, config.offsets_table), group_(string_literal(where_.dialect, group)) {}

std::string KafkaOffsetsTable::create_statement() const {
  if (where_.dialect == Dialect::Postgres)
    return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
           " (consumer_group text NOT NULL, topic text NOT NULL, partition_id integer NOT NULL, next_offset bigint NOT NULL, "
           "owner text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (consumer_group, topic, partition_id))";
  // Kafka topic names are at most 249 ASCII characters.
  return "CREATE TABLE IF NOT EXISTS " + where_.quoted +
         " (consumer_group VARCHAR(190) NOT NULL, topic VARCHAR(249) NOT NULL, partition_id INT NOT NULL, next_offset BIGINT "
         "NOT NULL, owner VARCHAR(190) NOT NULL, updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY "
         "(consumer_group, topic, partition_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
}

std::optional<TargetError> KafkaOffsetsTable::ensure(TargetConnection& target, bool create, bool& exists) const {
  return where_.ensure(target, create_statement(), create, exists);
}

namespace {

std::optional<PartitionPosition> rows_by_partition(const std::vector<TargetRow>& rows) {
  PartitionPosition out;
  for (const TargetRow& row : rows) {
    if (row.size() < 4 || !row[0] || !row[1] || !row[2]) return std::nullopt;
    out[*row[0] + "/" + *row[1]] = PartitionOffset{std::stoll(*row[2]), row[3].value_or("")};
  }
  return out;
}

}  // namespace

std::optional<PartitionPosition> KafkaOffsetsTable::read(TargetConnection& target, TargetError* error) const {
  const auto rows = target.query(
      "SELECT topic, partition_id, next_offset, owner FROM " + where_.quoted + " WHERE consumer_group = " + group_, error);
  if (!rows) return std::nullopt;
  return rows_by_partition(*rows);
}

Fallible<std::map<std::string, int64_t>> KafkaOffsetsTable::claim(TargetConnection& target,
                                                                  const std::vector<std::string>& partitions,
                                                                  const std::string& owner, const StartOf& start_of) const {
  using Result = Fallible<std::map<std::string, int64_t>>;
  const auto fail = [&](const std::string& why) {
    target.execute("ROLLBACK");
    return Result::failure("cannot claim the partitions in " + where_.label + ": " + why);
  };
  if (auto failed = target.execute("BEGIN")) return fail(failed->message);
  // Locks the group's rows: a previous owner's transaction in flight commits (or fails) first.
  const std::string select = "SELECT topic, partition_id, next_offset, owner FROM " + where_.quoted + " WHERE consumer_group = " +
                             group_ + " FOR UPDATE";
  TargetError error;
  auto rows = target.query(select, &error);
  if (!rows) return fail(error.message);
  auto stored = rows_by_partition(*rows);
  if (!stored) return fail("a row without its values");
  const bool first_start = stored->empty();
  std::string values;
  for (const std::string& partition : partitions) {
    const auto split = split_partition_name(partition);
    if (!split) return fail("'" + partition + "' is not a topic/partition");
    int64_t start = 0;
    if (const auto found = stored->find(partition); found != stored->end()) {
      start = found->second.next;
    } else {
      std::string why;
      const auto from = start_of(partition, first_start, why);
      if (!from) return fail(why);
      start = *from;
    }
    values += (values.empty() ? "(" : ", (") + group_ + ", " + string_literal(where_.dialect, split->first) + ", " +
              std::to_string(split->second) + ", " + std::to_string(start) + ", " + string_literal(where_.dialect, owner) + ")";
  }
  if (!values.empty()) {
    std::string upsert = "INSERT INTO " + where_.quoted + " (consumer_group, topic, partition_id, next_offset, owner) VALUES " + values;
    upsert += where_.dialect == Dialect::Postgres
                  ? " ON CONFLICT (consumer_group, topic, partition_id) DO UPDATE SET owner = EXCLUDED.owner, updated_at = now()"
                  : " ON DUPLICATE KEY UPDATE owner = VALUES(owner), updated_at = CURRENT_TIMESTAMP(6)";
    if (auto failed = target.execute(upsert)) return fail(failed->message);
  }
  // Read again: a row another member created meanwhile keeps its offset.
  rows = target.query(select, &error);
  if (!rows) return fail(error.message);
  stored = rows_by_partition(*rows);
  if (!stored) return fail("a row without its values");
  if (auto failed = target.execute("COMMIT")) return Result::failure("cannot claim the partitions in " + where_.label + ": " + failed->message);
  std::map<std::string, int64_t> out;
  for (const std::string& partition : partitions) {
    const auto found = stored->find(partition);
    if (found == stored->end()) return Result::failure("cannot claim " + partition + " in " + where_.label + ": its row vanished");
    out[partition] = found->second.next;
  }
  return Result{std::move(out), ""};
}

void KafkaOffsetsTable::append_write(std::string& script, const PartitionPosition& offsets) const {
  if (offsets.empty()) return;
  script += "INSERT INTO " + where_.quoted + (where_.dialect == Dialect::Postgres ? " AS o" : "") +
            " (consumer_group, topic, partition_id, next_offset, owner) VALUES ";
  bool first = true;
  for (const auto& [partition, offset] : offsets) {
    const auto split = split_partition_name(partition);
    if (!split) continue;  // the source names partitions so
    script += (first ? "(" : ", (") + group_ + ", " + string_literal(where_.dialect, split->first) + ", " +
              std::to_string(split->second) + ", " + std::to_string(offset.next) + ", " +
              string_literal(where_.dialect, offset.owner) + ")";
    first = false;
  }
  // Another owner's row: the offset becomes text that is no number, which fails the statement and with it
  // the transaction (the branch is evaluated only when taken; the sink's MySQL session is strict).
  const std::string fenced = std::string("'") + kFenced + ": partition ', ";
  if (where_.dialect == Dialect::Postgres)
    script += " ON CONFLICT (consumer_group, topic, partition_id) DO UPDATE SET next_offset = CASE WHEN o.owner = "
              "EXCLUDED.owner THEN EXCLUDED.next_offset ELSE CAST(concat(" + fenced +
              "o.topic, '/', o.partition_id, ' now belongs to ', o.owner) AS bigint) END, updated_at = now();\n";
  else
    script += " ON DUPLICATE KEY UPDATE next_offset = IF(owner = VALUES(owner), VALUES(next_offset), concat(" + fenced +
              "topic, '/', partition_id, ' now belongs to ', owner)), updated_at = CURRENT_TIMESTAMP(6);\n";
}

}  // namespace tidemark::dbsink
