#include "source/mysql/mysql_snapshot_reader.hpp"

#include <mysql.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "config/source_kinds.hpp"
#include "source/mysql/mysql_column_kinds.hpp"
#include "db/mysql_connection.hpp"
#include "source/mysql/result_value_parser.hpp"
#include "source/table_patterns.hpp"

namespace tidemark::mysql {

using snapshot::Chunk;
using snapshot::ChunkQuery;
using snapshot::KeyText;
using snapshot::TableLayout;

namespace {

constexpr const char* kDefaultWatermarkTable = "tidemark_watermark";
constexpr const char* kDefaultSignalTable = "tidemark_signal";

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) ==
                                                                              std::tolower(static_cast<unsigned char>(y)); });
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string trim_blanks(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string table_sql(const std::string& database, const std::string& table) {
  return quote_identifier(database) + "." + quote_identifier(table);
}

// The client errors that mean the connection is gone (CR_SERVER_GONE_ERROR, CR_SERVER_LOST,
// CR_SERVER_LOST_EXTENDED): the next call reconnects.
constexpr const char* kCancelled = "the snapshot query was cancelled";

bool connection_lost(unsigned code) { return code == 2006 || code == 2013 || code == 2055; }

struct StmtCloser {
  void operator()(MYSQL_STMT* s) const { mysql_stmt_close(s); }
};

// A bind buffer of one result column; the fetched value lands here.
struct Slot {
  unsigned long length = 0;
  my_bool is_null = 0;
  my_bool error = 0;
  uint64_t integer = 0;
  float f = 0;
  double d = 0;
  MYSQL_TIME time{};
  char none = 0;  // byte columns are bound without room and fetched whole with mysql_stmt_fetch_column
};

template <typename T>
Fallible<T> success(T value) {
  Fallible<T> f;
  f.value.emplace(std::move(value));
  return f;
}

}  // namespace

struct MySqlSnapshotReader::Rows {
  std::vector<Row> rows;             // whole rows, in the layout's column order (when asked for)
  std::optional<KeyText> last_key;   // the last row's key (nullopt: no row)
};

std::string MySqlSnapshotReader::Table::sql() const { return table_sql(database, name); }

MySqlSnapshotReader::MySqlSnapshotReader(const Config& config)
    : config_(config),
      watermark_(resolve(config.snapshot.watermark_table, kDefaultWatermarkTable)),
      signal_(resolve(config.snapshot.signal_table, kDefaultSignalTable)) {}

MySqlSnapshotReader::~MySqlSnapshotReader() = default;

MySqlSnapshotReader::Table MySqlSnapshotReader::resolve(const std::string& name, const std::string& fallback) const {
  const std::string n = name.empty() ? fallback : name;
  const size_t dot = n.find('.');
  if (dot == std::string::npos) return {config_.source.database, n};
  return {n.substr(0, dot), n.substr(dot + 1)};
}

std::optional<std::string> MySqlSnapshotReader::connect() {
  cancel_.forget();
  connection_.reset();
  // The client waits a little longer than the server's own limit (below), so a slow chunk ends on the
  // server instead of running on after the client gave up.
  const auto read_timeout_s = static_cast<unsigned>(config_.snapshot.query_timeout_ms / 1000 + 10);
  auto c = std::make_unique<MySqlConnection>(config_.source, std::max(30U, read_timeout_s));
  const SourceConfig& s = config_.source;
  if (!c->ok()) {
    return "snapshot connection: cannot connect to MySQL/MariaDB at " + s.host + ":" +
           std::to_string(source_port(s)) + " as " + s.user + ": " + c->error() +
           ". Check source.host, source.port, source.user and source.password";
  }
  // UTC: TIMESTAMP values are the binlog's instants. Result charset NULL: text arrives as stored and is
  // converted by the decoder's own code (result_value_parser.hpp). READ COMMITTED: DBLog's chunk sees what
  // was committed before its low watermark.
  for (const char* sql : {"SET time_zone = '+00:00'", "SET character_set_results = NULL",
                          "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "SET autocommit = 1"}) {
    if (!c->execute(sql)) return std::string("snapshot connection: ") + sql + " failed: " + c->error();
  }
  // Every statement of this session is bounded: MariaDB's max_statement_time (seconds), MySQL's
  // max_execution_time (milliseconds, SELECT only: the chunk and key queries).
  const int64_t timeout_ms = config_.snapshot.query_timeout_ms;
  if (!c->execute("SET SESSION max_statement_time = " + std::to_string(static_cast<double>(timeout_ms) / 1000.0)) &&
      !c->execute("SET SESSION max_execution_time = " + std::to_string(timeout_ms)))
    return "snapshot connection: cannot set a statement timeout (max_statement_time / max_execution_time): " + c->error();
  const char* server = mysql_get_server_info(c->raw());
  set_statement_ = server != nullptr && std::string_view(server).find("MariaDB") != std::string_view::npos;
  const bool wanted = cancel_.publish(mysql_thread_id(c->raw()));
  connection_ = std::move(c);
  if (!wanted) return std::string(kCancelled);
  return std::nullopt;
}

void MySqlSnapshotReader::drop_connection() {
  cancel_.forget();  // a KILL must never name a connection id the server may give to someone else
  connection_.reset();
}

std::optional<std::string> MySqlSnapshotReader::ensure_connected() {
  if (cancel_.cancelled()) return std::string(kCancelled);
  if (cancel_.take_ended()) drop_connection();
  if (connection_) return std::nullopt;
  return connect();
}

std::string MySqlSnapshotReader::failure(const std::string& what) {
  std::string message = what + ": " + connection_->error();
  if (connection_lost(connection_->error_code())) drop_connection();
  return message;
}

std::string MySqlSnapshotReader::account() {
  // CURRENT_USER() is 'user@host' as the server matched it: what a GRANT names.
  const auto current = connection_->query_value("SELECT CURRENT_USER()");
  const std::string text = current.value_or(config_.source.user + "@%");
  const size_t at = text.rfind('@');
  if (at == std::string::npos) return "'" + text + "'@'%'";
  return "'" + text.substr(0, at) + "'@'" + text.substr(at + 1) + "'";
}

// ---- control tables ---------------------------------------------------------------------------------------

std::vector<std::string> MySqlSnapshotReader::prepare_table(const Table& table, const std::string& ddl,
                                                            const std::vector<std::string>& columns, bool create,
                                                            const std::string& grants) {
  const std::string name = table.database + "." + table.name;
  auto rows = connection_->query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
                                 connection_->quote(table.database) + " AND TABLE_NAME = " + connection_->quote(table.name));
  if (!rows) return {failure("cannot read information_schema.COLUMNS for " + name)};
  if (rows->empty()) {
    if (!create) {
      return {"snapshot table " + name + " does not exist (snapshot.create_tables is off). Create it: " + ddl +
              "; and let Tidemark use it: " + grants};
    }
    if (!connection_->execute(ddl)) {
      return {failure("cannot create snapshot table " + name) + ". Create it as a privileged user: " + ddl + "; " + grants};
    }
    return {};
  }
  std::vector<std::string> missing;
  for (const std::string& column : columns) {
    const bool found = std::any_of(rows->begin(), rows->end(), [&](const SqlRow& r) { return same_name(r[0].value_or(""), column); });
    if (!found) missing.push_back(column);
  }
  if (!missing.empty()) {
    return {"snapshot table " + name + " lacks the column(s) " + join(missing, ", ") +
            ": it is not the table Tidemark expects. Drop or rename it, or point the setting at another table; the "
            "expected definition: " + ddl};
  }
  return {};
}

bool MySqlSnapshotReader::control_tables_exist() {
  if (ensure_connected()) return false;
  const auto n = connection_->query_value(
      "SELECT COUNT(*) FROM information_schema.tables WHERE (table_schema = " + connection_->quote(watermark_.database) +
      " AND table_name = " + connection_->quote(watermark_.name) + ") OR (table_schema = " +
      connection_->quote(signal_.database) + " AND table_name = " + connection_->quote(signal_.name) + ")");
  return n && *n == "2";
}

std::vector<std::string> MySqlSnapshotReader::prepare(bool create) {
  if (auto e = ensure_connected()) return {*e};
  std::vector<std::string> problems;
  for (const auto* t : {&watermark_, &signal_}) {
    if (t->database.empty()) {
      problems.push_back("snapshot table '" + t->name + "' names no database and source.database is empty: write it as "
                         "'database.table' (snapshot.watermark_table / snapshot.signal_table)");
    }
  }
  if (!problems.empty()) return problems;
  const std::string who = account();
  const std::string wm_ddl = "CREATE TABLE IF NOT EXISTS " + watermark_.sql() +
                             " (pipeline VARCHAR(255) PRIMARY KEY, mark VARCHAR(64) NOT NULL)";
  const std::string wm_grants = "GRANT SELECT, INSERT, UPDATE ON " + watermark_.sql() + " TO " + who;
  const std::string row_sql = "INSERT IGNORE INTO " + watermark_.sql() + " (pipeline, mark) VALUES (" +
                              connection_->quote(config_.name) + ", '')";
  auto wm = prepare_table(watermark_, wm_ddl, {"pipeline", "mark"}, create, wm_grants);
  if (wm.empty() && connection_) {
    if (create) {
      if (!connection_->execute(row_sql)) {
        problems.push_back(failure("cannot insert this pipeline's watermark row") + ". Run: " + row_sql + "; " + wm_grants);
      }
    } else {
      auto row = connection_->query("SELECT mark FROM " + watermark_.sql() + " WHERE pipeline = " + connection_->quote(config_.name));
      if (!row) {
        problems.push_back(failure("cannot read the watermark table " + watermark_.database + "." + watermark_.name) +
                           ". Grant: " + wm_grants);
      } else if (row->empty()) {
        problems.push_back("the watermark table " + watermark_.database + "." + watermark_.name + " has no row for pipeline '" +
                           config_.name + "'. Insert it: " + row_sql + "; " + wm_grants);
      }
    }
  }
  problems.insert(problems.end(), wm.begin(), wm.end());
  if (!connection_) return problems;
  const std::string sig_ddl = "CREATE TABLE IF NOT EXISTS " + signal_.sql() +
                              " (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT, created TIMESTAMP(6) NOT "
                              "NULL DEFAULT CURRENT_TIMESTAMP(6))";
  const std::string sig_grants = "GRANT SELECT, INSERT ON " + signal_.sql() + " TO " + who;
  auto sig = prepare_table(signal_, sig_ddl, {"id", "type", "data", "created"}, create, sig_grants);
  problems.insert(problems.end(), sig.begin(), sig.end());
  return problems;
}

std::optional<std::string> MySqlSnapshotReader::write_watermark(const std::string& mark) {
  if (auto e = ensure_connected()) return e;
  const std::string pipeline = connection_->quote(config_.name);
  if (!connection_->execute("UPDATE " + watermark_.sql() + " SET mark = " + connection_->quote(mark) + " WHERE pipeline = " + pipeline)) {
    return failure("cannot write the watermark to " + watermark_.database + "." + watermark_.name);
  }
  if (mysql_affected_rows(connection_->raw()) > 0) return std::nullopt;
  // No row changed: the row is missing, or already holds this mark.
  auto row = connection_->query("SELECT mark FROM " + watermark_.sql() + " WHERE pipeline = " + pipeline);
  if (!row) return failure("cannot read the watermark table " + watermark_.database + "." + watermark_.name);
  if (row->empty()) {
    return "the watermark table " + watermark_.database + "." + watermark_.name + " has no row for pipeline '" + config_.name +
           "': snapshot preparation inserts it (INSERT IGNORE INTO " + watermark_.sql() + " (pipeline, mark) VALUES (" +
           pipeline + ", ''))";
  }
  return std::nullopt;
}

std::optional<std::string> MySqlSnapshotReader::insert_signal(const std::string& id, const std::string& type,
                                                              const std::string& data) {
  if (auto e = ensure_connected()) return e;
  const std::string sql = "INSERT INTO " + signal_.sql() + " (id, type, data) VALUES (" + connection_->quote(id) + ", " +
                          connection_->quote(type) + ", " + connection_->quote(data) + ")";
  if (!connection_->execute(sql)) return failure("cannot insert the signal into " + signal_.database + "." + signal_.name);
  return std::nullopt;
}

// ---- tables -----------------------------------------------------------------------------------------------

Fallible<std::vector<TableId>> MySqlSnapshotReader::captured_tables() {
  if (auto e = ensure_connected()) return Fallible<std::vector<TableId>>::failure(*e);
  auto rows = connection_->query(
      "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "
      "AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY TABLE_SCHEMA, TABLE_NAME");
  if (!rows) return Fallible<std::vector<TableId>>::failure(failure("cannot list the tables in information_schema.TABLES"));
  std::vector<TableId> tables;
  for (const auto& r : *rows) {
    const std::string db = r[0].value_or(""), table = r[1].value_or("");
    if ((db == watermark_.database && table == watermark_.name) || (db == signal_.database && table == signal_.name)) continue;
    if (table_selected(config_.source.tables, db + "." + table)) tables.push_back(TableId{db, "", table});
  }
  return success(std::move(tables));
}

Fallible<TableLayout> MySqlSnapshotReader::describe(const std::string& name, const std::vector<std::string>& surrogate_key) {
  using Result = Fallible<TableLayout>;
  if (auto e = ensure_connected()) return Result::failure(*e);
  const size_t dot = name.find('.');
  const std::string db = dot == std::string::npos ? config_.source.database : name.substr(0, dot);
  const std::string table = dot == std::string::npos ? name : name.substr(dot + 1);
  const std::string qualified = db + "." + table;
  if (db.empty()) {
    return Result::failure("table '" + name + "' names no database and source.database is empty: write it as 'database.table'");
  }
  if ((db == watermark_.database && table == watermark_.name) || (db == signal_.database && table == signal_.name)) {
    return Result::failure("table " + qualified + " is Tidemark's own watermark or signal table: it is never snapshotted");
  }
  InformationSchemaLoader loader(*connection_);
  std::string error;
  auto catalog = loader.load(db, table, error);
  if (!catalog) {
    if (error.starts_with("cannot read")) return Result::failure(failure("cannot describe " + qualified));
    return Result::failure("unknown table " + qualified + ": " + error + ". Check the name (\"database.table\", or \"table\" in "
                           "source.database) and that the source user has SELECT on it");
  }
  if (!table_selected(config_.source.tables, qualified)) {
    return Result::failure("table " + qualified + " is not captured: source.tables [" + join(config_.source.tables, ", ") +
                           "] does not match it. Add it to source.tables (a snapshot of a table whose changes are not "
                           "captured would be stale at once)");
  }
  std::vector<std::string> key = surrogate_key;
  bool surrogate = !key.empty();
  if (key.empty()) key = catalog->primary_key;
  if (key.empty()) {
    // snapshot.surrogate_keys: "db.table" (or "table" in source.database) -> "col1,col2"
    auto it = config_.snapshot.surrogate_keys.find(qualified);
    if (it == config_.snapshot.surrogate_keys.end() && db == config_.source.database) it = config_.snapshot.surrogate_keys.find(table);
    if (it != config_.snapshot.surrogate_keys.end()) {
      std::string rest = it->second;
      for (size_t comma; (comma = rest.find(',')) != std::string::npos; rest.erase(0, comma + 1)) key.push_back(trim_blanks(rest.substr(0, comma)));
      key.push_back(trim_blanks(rest));
      key.erase(std::remove(key.begin(), key.end(), std::string()), key.end());
      surrogate = true;
    }
  }
  if (key.empty()) {
    return Result::failure("table " + qualified + " has no primary key and no surrogate key: set snapshot.surrogate_keys: {'" +
                           qualified + "': 'col'} naming NOT NULL column(s) that identify a row (comma-separated)");
  }
  auto schema = std::make_shared<TableSchema>();
  schema->id = TableId{db, "", table};
  schema->complete_old_image = true;  // as the log's schema: binlog_row_image=FULL is a prerequisite
  for (const auto& c : catalog->columns) {
    schema->columns.push_back(c.name);
    schema->column_info.push_back(column_info(c));
  }
  TableLayout layout;
  for (const std::string& k : key) {
    auto it = std::find(schema->columns.begin(), schema->columns.end(), k);
    if (it == schema->columns.end())
      it = std::find_if(schema->columns.begin(), schema->columns.end(), [&](const std::string& c) { return same_name(c, k); });
    if (it == schema->columns.end()) {
      return Result::failure(std::string(surrogate ? "surrogate key" : "primary key") + " column '" + k + "' does not exist in " +
                             qualified + " (columns: " + join(schema->columns, ", ") + "). Fix snapshot.surrogate_keys");
    }
    const auto index = static_cast<size_t>(it - schema->columns.begin());
    if (std::find(schema->key_columns.begin(), schema->key_columns.end(), index) != schema->key_columns.end()) {
      return Result::failure("key column '" + k + "' of " + qualified + " is named twice. Fix snapshot.surrogate_keys");
    }
    schema->key_columns.push_back(index);
    layout.key_names.push_back(*it);
  }
  described_[qualified] = Described{std::move(*catalog)};
  layout.schema = std::move(schema);
  return success(std::move(layout));
}

const CatalogTable* MySqlSnapshotReader::catalog_of(const TableLayout& layout, std::string& error) {
  const TableId& id = layout.schema->id;
  const std::string qualified = id.database + "." + id.table;
  auto it = described_.find(qualified);
  if (it == described_.end()) {
    InformationSchemaLoader loader(*connection_);
    auto catalog = loader.load(id.database, id.table, error);
    if (!catalog) return nullptr;
    it = described_.emplace(qualified, Described{std::move(*catalog)}).first;
  }
  for (const std::string& column : layout.schema->columns) {
    const auto& cols = it->second.catalog.columns;
    if (std::none_of(cols.begin(), cols.end(), [&](const CatalogColumn& c) { return c.name == column; })) {
      described_.erase(it);
      error = "column " + column + " of " + qualified + " is gone from the catalog: the table changed since it was described";
      return nullptr;
    }
  }
  return &it->second.catalog;
}

// ---- chunk SQL --------------------------------------------------------------------------------------------

namespace {

const CatalogColumn& catalog_column(const CatalogTable& catalog, const std::string& name) {
  for (const auto& c : catalog.columns)
    if (c.name == name) return c;
  static const CatalogColumn kNone;
  return kNone;  // catalog_of checked every layout column
}

// A KeyText entry as SQL. The text comes from the state file, so it is checked against its kind, never
// pasted as it is.
// [+-]digits[.digits][e[+-]digits]: a key bound from a signal goes into the SQL as this literal, so nothing
// else may pass ("1--" would comment out the rest of the statement).
bool plain_number(const std::string& text) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    return i > start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  bool whole = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    whole = digits() || whole;
  }
  if (!whole) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

bool literal(MySqlConnection& connection, const CatalogColumn& column, const std::string& text, std::string& out) {
  switch (key_literal_kind(column)) {
    case KeyLiteral::Number:
      if (!plain_number(text)) return false;
      out = text;
      return true;
    case KeyLiteral::Hex:
      if (text.size() % 2 != 0 || text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return false;
      out = "X'" + text + "'";
      return true;
    case KeyLiteral::Bits: {
      if (text.empty() || text.size() > 16 || text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return false;
      out = std::to_string(std::stoull(text, nullptr, 16));
      return true;
    }
    case KeyLiteral::String: out = connection.quote(text); return true;
  }
  return false;
}

std::string order_by(const TableLayout& layout, bool descending) {
  std::string out = " ORDER BY ";
  for (size_t i = 0; i < layout.key_names.size(); ++i)
    out += (i ? ", " : "") + quote_identifier(layout.key_names[i]) + (descending ? " DESC" : "");
  return out;
}

}  // namespace

// `(k1 > a) OR (k1 = a AND k2 > b)` (lower, exclusive) or `(k1 < a) OR (k1 = a AND k2 <= b)` (upper,
// inclusive): the expanded form, because MySQL uses no index for `(k1, k2) > (a, b)`.
std::optional<std::string> MySqlSnapshotReader::key_bound(const TableLayout& layout, const CatalogTable& catalog,
                                                          const KeyText& key, bool upper, std::string& out) {
  const size_t n = layout.key_names.size();
  if (key.size() != n) {
    return "a key of " + std::to_string(key.size()) + " values for the " + std::to_string(n) + " key columns of " +
           layout.schema->id.to_string();
  }
  std::vector<std::string> literals(n);
  for (size_t i = 0; i < n; ++i) {
    if (!key[i]) return "key column " + layout.key_names[i] + " of " + layout.schema->id.to_string() + " is NULL in a chunk bound";
    if (!literal(*connection_, catalog_column(catalog, layout.key_names[i]), *key[i], literals[i])) {
      return "key value '" + key[i]->substr(0, 80) + "' of column " + layout.key_names[i] + " is not in the form its type needs";
    }
  }
  std::vector<std::string> terms;
  for (size_t i = 0; i < n; ++i) {
    std::string term;
    for (size_t j = 0; j < i; ++j) term += quote_identifier(layout.key_names[j]) + " = " + literals[j] + " AND ";
    const char* op = upper ? (i + 1 < n ? " < " : " <= ") : " > ";
    term += quote_identifier(layout.key_names[i]) + op + literals[i];
    terms.push_back("(" + term + ")");
  }
  out = "(" + join(terms, " OR ") + ")";
  return std::nullopt;
}

// Runs `sql` as a prepared statement (the binary protocol, see result_value_parser.hpp). Its columns are
// the layout's columns (`whole_rows`) or its key columns.
std::optional<std::string> MySqlSnapshotReader::select(const std::string& sql, const TableLayout& layout,
                                                       const CatalogTable& catalog, bool whole_rows, Rows& out) {
  const TableSchema& schema = *layout.schema;
  const std::vector<std::string>& names = whole_rows ? schema.columns : layout.key_names;
  std::vector<size_t> key_positions;
  if (whole_rows) {
    key_positions = schema.key_columns;
  } else {
    for (size_t i = 0; i < names.size(); ++i) key_positions.push_back(i);
  }
  std::unique_ptr<MYSQL_STMT, StmtCloser> stmt(mysql_stmt_init(connection_->raw()));
  if (!stmt) return "out of memory";
  auto stmt_failure = [&](const std::string& what) {
    std::string message = what + " on " + schema.id.to_string() + ": " + mysql_stmt_error(stmt.get());
    if (connection_lost(mysql_stmt_errno(stmt.get()))) drop_connection();
    return message;
  };
  // Prepared and executed in one round trip (MariaDB 10.2+; the connector falls back to two for other servers).
  unsigned int no_parameters = 0;
  if (mysql_stmt_attr_set(stmt.get(), STMT_ATTR_PREBIND_PARAMS, &no_parameters) != 0) return stmt_failure("chunk SELECT failed");
  if (mariadb_stmt_execute_direct(stmt.get(), sql.data(), sql.size()) != 0) {
    if (mysql_stmt_param_count(stmt.get()) != 0) return "the snapshot condition contains '?' placeholders: write the values literally";
    return stmt_failure("chunk SELECT failed (" + sql.substr(0, 300) + ")");
  }
  std::unique_ptr<MYSQL_RES, decltype(&mysql_free_result)> meta(mysql_stmt_result_metadata(stmt.get()), &mysql_free_result);
  if (!meta || mysql_num_fields(meta.get()) != names.size()) return "chunk SELECT on " + schema.id.to_string() + " returned unexpected columns";
  // Unbuffered: rows are decoded as they come off the socket, never copied into a whole result first.
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
  const size_t n = names.size();
  std::vector<ResultColumn> columns;
  for (size_t i = 0; i < n; ++i) columns.push_back(result_column(fields[i], catalog_column(catalog, names[i])));
  std::vector<Slot> slots(n);
  std::vector<MYSQL_BIND> binds(n);
  for (size_t i = 0; i < n; ++i) {
    MYSQL_BIND& b = binds[i];
    std::memset(&b, 0, sizeof b);
    Slot& s = slots[i];
    b.length = &s.length;
    b.is_null = &s.is_null;
    b.error = &s.error;
    switch (wire_kind(columns[i].type)) {
      case WireKind::Integer:
        b.buffer_type = MYSQL_TYPE_LONGLONG;
        b.buffer = &s.integer;
        b.is_unsigned = columns[i].is_unsigned;
        break;
      case WireKind::Float: b.buffer_type = MYSQL_TYPE_FLOAT; b.buffer = &s.f; break;
      case WireKind::Double: b.buffer_type = MYSQL_TYPE_DOUBLE; b.buffer = &s.d; break;
      case WireKind::Temporal:
        b.buffer_type = columns[i].type;
        b.buffer = &s.time;
        b.buffer_length = sizeof s.time;
        break;
      case WireKind::Bytes: b.buffer_type = MYSQL_TYPE_STRING; b.buffer = &s.none; b.buffer_length = 0; break;
    }
  }
  if (mysql_stmt_bind_result(stmt.get(), binds.data()) != 0) return stmt_failure("cannot bind the chunk result");
  std::vector<WireValue> wire(n);  // reused row after row: byte columns keep their capacity
  bool any = false;
  for (;;) {
    const int rc = mysql_stmt_fetch(stmt.get());
    if (rc == MYSQL_NO_DATA) break;
    if (rc == 1) return stmt_failure("cannot fetch the chunk");
    any = true;
    // 0, or MYSQL_DATA_TRUNCATED: byte columns have no room yet and are fetched below.
    for (size_t i = 0; i < n; ++i) {
      WireValue& w = wire[i];
      const Slot& s = slots[i];
      w.is_null = s.is_null != 0;
      if (w.is_null) continue;
      switch (wire_kind(columns[i].type)) {
        case WireKind::Integer: w.integer = s.integer; break;
        case WireKind::Float: w.f = s.f; break;
        case WireKind::Double: w.d = s.d; break;
        case WireKind::Temporal: w.time = s.time; break;
        case WireKind::Bytes: {
          w.bytes.resize(s.length);
          if (s.length == 0) break;
          MYSQL_BIND whole;
          std::memset(&whole, 0, sizeof whole);
          unsigned long length = 0;
          whole.buffer_type = MYSQL_TYPE_STRING;
          whole.buffer = w.bytes.data();
          whole.buffer_length = s.length;
          whole.length = &length;
          if (mysql_stmt_fetch_column(stmt.get(), &whole, static_cast<unsigned>(i), 0) != 0)
            return stmt_failure("cannot fetch column " + names[i]);
          break;
        }
      }
    }
    if (!whole_rows) continue;
    Row row(n);
    for (size_t i = 0; i < n; ++i) {
      std::string error;
      if (!parse_result_value(columns[i], wire[i], row[i], error)) return "column " + names[i] + " of " + schema.id.to_string() + ": " + error;
    }
    out.rows.push_back(std::move(row));
  }
  if (!any) return std::nullopt;
  KeyText key;  // of the last row, still in `wire`: where the next chunk starts
  for (const size_t k : key_positions) {
    std::string error;
    std::optional<std::string> text;
    if (!result_key_text(columns[k], wire[k], text, error)) return "key column " + names[k] + " of " + schema.id.to_string() + ": " + error;
    key.push_back(std::move(text));
  }
  out.last_key = std::move(key);
  return std::nullopt;
}

std::vector<std::string> MySqlSnapshotReader::signal_table_warnings() {
  // Accounts' database-wide grants reach the signal table too, and information_schema shows other accounts'
  // grants only to a user who may read the mysql schema: so the advice is about where the table lives.
  const bool shared = std::any_of(config_.source.tables.begin(), config_.source.tables.end(), [&](const std::string& t) {
    const size_t dot = t.find('.');
    return dot != std::string::npos && (t.substr(0, dot) == "*" || same_name(t.substr(0, dot), signal_.database));
  });
  if (!shared) return {};
  return {"the signal table " + signal_.database + "." + signal_.name + " lives in a database with captured tables, so "
          "every account with INSERT on " + signal_.database + ".* (applications often have it) can start, stop and "
          "pause snapshots: give the control tables a database of their own (snapshot.signal_table: "
          "tidemark.tidemark_signal, snapshot.watermark_table: tidemark.tidemark_watermark) and GRANT INSERT ON "
          "tidemark.tidemark_signal TO the accounts you choose (docs/security.md)"};
}

void MySqlSnapshotReader::cancel() {
  const uint64_t id = cancel_.request();
  if (id == 0) return;
  MySqlConnection killer(config_.source, 10);
  if (!killer.ok() || !killer.execute("KILL CONNECTION " + std::to_string(id)))
    spdlog::warn("cannot cancel the snapshot query (KILL CONNECTION {}): {}", id, killer.error());
}

Fallible<std::optional<KeyText>> MySqlSnapshotReader::max_key(const TableLayout& layout, const std::string& where) {
  using Result = Fallible<std::optional<KeyText>>;
  if (!layout.schema || layout.key_names.empty()) return Result::failure("max_key: a layout without a key");
  if (!where.empty()) {
    if (auto bad = check_row_filter(where, layout.schema->columns, sql_dialect()))
      return Result::failure("the condition for " + layout.schema->id.to_string() + " is not allowed: " + *bad);
  }
  if (auto e = ensure_connected()) return Result::failure(*e);
  std::string error;
  const CatalogTable* catalog = catalog_of(layout, error);
  if (!catalog) return Result::failure(error.empty() ? failure("cannot describe " + layout.schema->id.to_string()) : error);
  const std::string from = " FROM " + table_sql(layout.schema->id.database, layout.schema->id.table);
  const std::string condition = where.empty() ? "" : "(" + where + ")";
  // A key with NULLs does not identify its row, and `k > last` never reaches it: refuse. Only nullable
  // columns are asked: `d IS NULL` is true for a zero date in a NOT NULL DATE column (ODBC compatibility).
  const TableId& id = layout.schema->id;
  auto nullable = connection_->query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
                                     connection_->quote(id.database) + " AND TABLE_NAME = " + connection_->quote(id.table) +
                                     " AND IS_NULLABLE = 'YES'");
  if (!nullable) return Result::failure(failure("cannot read information_schema.COLUMNS"));
  std::vector<std::string> nulls;
  for (const auto& k : layout.key_names)
    if (std::any_of(nullable->begin(), nullable->end(), [&](const SqlRow& r) { return r[0] == k; }))
      nulls.push_back(quote_identifier(k) + " IS NULL");
  // The user's condition runs only in a read-only transaction.
  if (!connection_->execute("START TRANSACTION READ ONLY")) return Result::failure(failure("cannot start a read-only transaction"));
  auto rollback = [&](std::string why) {
    if (connection_) connection_->execute("ROLLBACK");
    return Result::failure(std::move(why));
  };
  std::optional<std::vector<SqlRow>> with_null{std::in_place};
  if (!nulls.empty()) {
    with_null = connection_->query("SELECT 1" + from + " WHERE (" + join(nulls, " OR ") + ")" +
                                   (condition.empty() ? "" : " AND " + condition) + " LIMIT 1");
  }
  if (!with_null) return rollback(failure("cannot read " + layout.schema->id.to_string()));
  if (!with_null->empty()) {
    return rollback("table " + layout.schema->id.to_string() + " has rows" + (where.empty() ? "" : " matching the condition") +
                           " with NULL in key column(s) " + join(layout.key_names, ", ") +
                           ": such a key does not identify its row. Choose NOT NULL key columns (snapshot.surrogate_keys) or "
                           "exclude those rows with the condition");
  }
  std::vector<std::string> keys;
  for (const auto& k : layout.key_names) keys.push_back(quote_identifier(k));
  Rows rows;
  const std::string sql = "SELECT " + join(keys, ", ") + from + (condition.empty() ? "" : " WHERE " + condition) +
                          order_by(layout, true) + " LIMIT 1";
  if (auto e = select(sql, layout, *catalog, false, rows)) return rollback(*e);
  if (!connection_->execute("COMMIT")) return Result::failure(failure("cannot commit the read-only transaction"));
  return success(std::move(rows.last_key));
}

Fallible<Chunk> MySqlSnapshotReader::read_chunk(const ChunkQuery& query) {
  using Result = Fallible<Chunk>;
  if (!query.layout || !query.layout->schema || query.layout->key_names.empty()) return Result::failure("read_chunk: a layout without a key");
  if (query.limit == 0) return Result::failure("read_chunk: a chunk of 0 rows");
  if (auto e = ensure_connected()) return Result::failure(*e);
  const TableLayout& layout = *query.layout;
  if (!query.where.empty()) {
    if (auto bad = check_row_filter(query.where, layout.schema->columns, sql_dialect()))
      return Result::failure("the condition for " + layout.schema->id.to_string() + " is not allowed: " + *bad);
  }
  std::string error;
  const CatalogTable* catalog = catalog_of(layout, error);
  if (!catalog) return Result::failure(error.empty() ? failure("cannot describe " + layout.schema->id.to_string()) : error);
  std::vector<std::string> conditions;
  for (const auto& [bound, upper] : {std::pair{&query.after, false}, std::pair{&query.upto, true}}) {
    if (!*bound) continue;
    std::string sql;
    if (auto e = key_bound(layout, *catalog, **bound, upper, sql)) return Result::failure(*e);
    conditions.push_back(std::move(sql));
  }
  if (!query.where.empty()) conditions.push_back("(" + query.where + ")");
  std::vector<std::string> columns;
  for (const auto& c : layout.schema->columns) columns.push_back(quote_identifier(c));
  const std::string sql = "SELECT " + join(columns, ", ") + " FROM " +
                          table_sql(layout.schema->id.database, layout.schema->id.table) +
                          (conditions.empty() ? "" : " WHERE " + join(conditions, " AND ")) + order_by(layout, false) +
                          " LIMIT " + std::to_string(query.limit);
  // One short READ COMMITTED (the session's level, set on connect), read-only transaction: on MariaDB the
  // autocommitted SELECT itself, made read-only for that statement (SET STATEMENT), in one round trip.
  Rows rows;
  if (set_statement_) {
    if (auto e = select("SET STATEMENT tx_read_only = 1 FOR " + sql, layout, *catalog, true, rows)) return Result::failure(*e);
  } else {
    if (!connection_->execute("START TRANSACTION READ ONLY")) return Result::failure(failure("cannot start the chunk transaction"));
    if (auto e = select(sql, layout, *catalog, true, rows)) {
      if (connection_) connection_->execute("ROLLBACK");
      return Result::failure(*e);
    }
    if (!connection_->execute("COMMIT")) return Result::failure(failure("cannot commit the chunk transaction"));
  }
  Chunk chunk;
  chunk.rows = std::move(rows.rows);
  if (rows.last_key) chunk.last_key = std::move(*rows.last_key);
  return success(std::move(chunk));
}

}  // namespace tidemark::mysql
