#pragma once
// Where a binlog reader is, and where a restart resumes: the GTID state after the last complete
// transaction (MariaDB's domain-server-sequence list, or MySQL's executed GTID set), with the binlog
// file and position after it as the fallback when the server has no GTIDs.
//
// Token: "binlog:flavor=mariadb;gtid=0-1-105,1-2-9;file=mysql-bin.000005;pos=1234" (gtid may be empty).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tidemark/change_event.hpp"

namespace tidemark::mysql {

enum class Flavor : uint8_t { MariaDb, MySql };

// MariaDB: the last GTID seen per replication domain ("0-1-105,1-2-9"). Resuming with
// @slave_connect_state = this text continues after each domain's GTID.
class MariaGtidState {
 public:
  struct Entry {
    uint32_t server_id = 0;
    uint64_t sequence = 0;
    bool operator==(const Entry&) const = default;
  };
  // Parses "D-S-N[,D-S-N...]" (empty text = empty state); nullopt on bad syntax or a repeated domain.
  static std::optional<MariaGtidState> parse(std::string_view text);
  void update(uint32_t domain, uint32_t server_id, uint64_t sequence) { domains_[domain] = Entry{server_id, sequence}; }
  std::string to_string() const;  // domains in ascending order
  bool empty() const { return domains_.empty(); }
  const std::map<uint32_t, Entry>& domains() const { return domains_; }
  bool operator==(const MariaGtidState&) const = default;

 private:
  std::map<uint32_t, Entry> domains_;
};

// MySQL: a GTID set, "uuid:1-5:7,uuid2:1-3" (source UUIDs in lower case and ascending order, intervals
// merged and ascending).
class MysqlGtidSet {
 public:
  static std::optional<MysqlGtidSet> parse(std::string_view text);
  void add(const std::string& sid, uint64_t gno);
  bool contains(const std::string& sid, uint64_t gno) const;
  std::string to_string() const;
  bool empty() const { return sets_.empty(); }
  bool operator==(const MysqlGtidSet&) const = default;

 private:
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> sets_;  // closed intervals
};

struct BinlogPosition {
  Flavor flavor = Flavor::MariaDb;
  std::string gtid;  // MariaGtidState or MysqlGtidSet text; empty when the server has no GTIDs
  std::string file;
  uint64_t position = 4;  // byte offset in `file` of the next event to read
  bool operator==(const BinlogPosition&) const = default;

  SourcePosition to_source_position() const;
  // nullopt when `position` is not a binlog token (e.g. a PostgreSQL one).
  static std::optional<BinlogPosition> parse(const SourcePosition& position);
  std::string describe() const;  // for logs: "gtid 0-1-105 (mysql-bin.000005:1234)"
};

}  // namespace tidemark::mysql
