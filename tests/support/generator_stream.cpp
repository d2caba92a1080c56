#include "generator_stream.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace tidemark::test {

std::string generator_topic(const std::string& prefix, int table) {
  return prefix + ".generator.t" + std::to_string(table);
}

std::vector<ConsumedRecord> consume_generator_topics(const std::string& bootstrap, const std::string& prefix,
                                                     int tables) {
  std::vector<ConsumedRecord> all;
  for (int t = 0; t < tables; ++t) {
    auto part = consume_all(bootstrap, generator_topic(prefix, t));
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

namespace {
// The generator's op for sequence n, derived here from its documented cycle (insert, update, delete).
char expected_op(int64_t n, int tables, int keys) {
  const int64_t round = n / tables / keys;
  return "cud"[round % 3];
}
}  // namespace

GeneratorStreamReport check_generator_stream(const std::vector<ConsumedRecord>& records,
                                             const GeneratorStreamExpectation& expect) {
  GeneratorStreamReport report;
  report.records = records.size();
  auto fail = [&](std::string message) {
    if (report.failures.size() < 20) report.failures.push_back(std::move(message));
  };
  // Per (topic, key): the highest sequence delivered so far and every sequence seen.
  std::map<std::pair<std::string, std::string>, int64_t> max_seen;
  std::set<int64_t> seen;
  // A delete awaiting its tombstone, per partition: its key and sequence.
  std::map<std::pair<std::string, int32_t>, std::pair<std::string, int64_t>> pending_tombstone;
  std::set<int64_t> tombstoned;   // deletes followed by their tombstone at least once
  std::set<int64_t> interrupted;  // deletes whose tombstone a crash cut off (the replay must bring both)

  for (const auto& r : records) {
    if (!r.key) {
      fail("record without key at " + r.topic + "/" + std::to_string(r.partition) + "@" + std::to_string(r.offset));
      continue;
    }
    if (r.partition != java_partition_for_key(*r.key, r.partition_count))
      fail("key " + *r.key + " in partition " + std::to_string(r.partition) + ", Java clients would use " +
           std::to_string(java_partition_for_key(*r.key, r.partition_count)));
    const auto id = std::make_pair(r.topic, *r.key);
    // A delete's tombstone must be the very next record of its partition.
    const auto pending = pending_tombstone.find({r.topic, r.partition});
    if (!r.value) {
      if (!expect.tombstones) fail("tombstone although tombstones are off, key " + *r.key);
      if (pending == pending_tombstone.end() || pending->second.first != *r.key)
        fail("tombstone for " + *r.key + " not right after its delete at offset " + std::to_string(r.offset));
      if (pending != pending_tombstone.end()) {
        tombstoned.insert(pending->second.second);
        pending_tombstone.erase(pending);
      }
      continue;
    }
    const auto value = nlohmann::json::parse(*r.value);
    const int64_t n = value["source"]["sequence"].get<int64_t>();
    if (pending != pending_tombstone.end()) {
      // Only a crash may come between a delete and its tombstone (kill -9 between the two produce calls);
      // then the next record of the partition is a replay, which sends the delete and its tombstone again.
      if (expect.allow_duplicates && seen.count(n)) {
        interrupted.insert(pending->second.second);
      } else {
        fail("delete of " + pending->second.first + " not followed by its tombstone in " + r.topic + "/" +
             std::to_string(r.partition));
      }
      pending_tombstone.erase(pending);
    }
    const std::string op = value["op"].get<std::string>();
    report.max_sequence = std::max(report.max_sequence, n);
    const auto key_json = nlohmann::json::parse(*r.key);
    const int64_t key_id = key_json["id"].get<int64_t>();
    if (key_id != n / expect.tables % expect.keys) fail("sequence " + std::to_string(n) + " under wrong key " + *r.key);
    if (op.size() != 1 || op[0] != expected_op(n, expect.tables, expect.keys))
      fail("sequence " + std::to_string(n) + " has op " + op);
    const nlohmann::json& image = op == "d" ? value["before"] : value["after"];
    if (image.is_null() || image["id"].get<int64_t>() != key_id) fail("sequence " + std::to_string(n) + " image key mismatch");
    if (op != "d" && image["version"].get<int64_t>() != n) fail("sequence " + std::to_string(n) + " has wrong version");

    const bool duplicate = !seen.insert(n).second;
    if (duplicate) {
      ++report.duplicates;
      if (!expect.allow_duplicates) fail("sequence " + std::to_string(n) + " delivered twice");
    }
    auto [it, inserted] = max_seen.emplace(id, n);
    if (!inserted) {
      // Going back is only allowed as a replay of something delivered before (no time travel).
      if (n < it->second && !duplicate)
        fail("key " + *r.key + ": sequence " + std::to_string(n) + " delivered after newer " + std::to_string(it->second));
      it->second = std::max(it->second, n);
    }
    if (op == "d" && expect.tombstones) pending_tombstone[{r.topic, r.partition}] = {*r.key, n};
  }
  for (const int64_t n : interrupted)
    if (!tombstoned.count(n)) fail("delete " + std::to_string(n) + " lost its tombstone in a crash and the replay did not resend it");
  for (int64_t n = expect.first_sequence; n < expect.end_sequence; ++n) {
    if (!seen.count(n)) {
      fail("sequence " + std::to_string(n) + " is missing");
    }
  }
  return report;
}

}  // namespace tidemark::test
