#include "source/postgres/pg_snapshot_reader.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "config/source_kinds.hpp"
#include "source/postgres/pg_column_kinds.hpp"
#include "source/postgres/pg_type_catalog.hpp"
#include "source/table_patterns.hpp"

namespace tidemark::pg {

namespace {

constexpr const char* kCancelled = "the snapshot query was cancelled";
using snapshot::Chunk;
using snapshot::ChunkQuery;
using snapshot::KeyText;
using snapshot::TableLayout;

const std::string& or_default(const std::string& value, const std::string& fallback) {
  return value.empty() ? fallback : value;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

std::string key_list(const std::vector<std::string>& names, const std::string& suffix = "") {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(quote_identifier(n) + suffix);
  return joined(quoted, ", ");
}

}  // namespace

PgSnapshotReader::PgSnapshotReader(const Config& config)
    : config_(config),
      application_name_("tidemark-" + config.name + "-snapshot"),
      watermark_(split(or_default(config.snapshot.watermark_table, "tidemark_watermark"))),
      signal_(split(or_default(config.snapshot.signal_table, "tidemark_signal"))) {}

PgSnapshotReader::QualifiedName PgSnapshotReader::split(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return {"public", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

PgSnapshotReader::~PgSnapshotReader() = default;

void PgSnapshotReader::cancel() {
  const uint64_t pid = cancel_.request();
  if (pid == 0) return;
  // By pid and application name: a pid the server has given to another session since is left alone.
  Connection killer(config_.source, application_name_ + "-cancel", Connection::Mode::Normal);
  if (!killer.ok() ||
      !killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2",
                    {std::to_string(pid), application_name_}))
    spdlog::warn("cannot cancel the snapshot query (pg_terminate_backend({})): {}", pid,
                 killer.ok() ? killer.last_error() : killer.error());
}

std::string PgSnapshotReader::begin_read_only_sql(const char* isolation) {
  return std::string("BEGIN ISOLATION LEVEL ") + isolation + " READ ONLY";
}

std::string PgSnapshotReader::statement_timeout_sql() const {
  return "SET LOCAL statement_timeout = " + std::to_string(config_.snapshot.query_timeout_ms);  // a validated integer
}

std::optional<std::string> PgSnapshotReader::begin_read_only(const char* isolation) {
  // One round trip: both statements are ours, in one simple query.
  if (!conn_->query(begin_read_only_sql(isolation) + "; " + statement_timeout_sql())) {
    std::string error = "cannot begin a read-only transaction with its statement timeout: " + conn_->last_error();
    conn_->query("ROLLBACK");
    return error;
  }
  return std::nullopt;
}

std::optional<std::string> PgSnapshotReader::connect() {
  cancel_.forget();
  conn_.reset();
  conn_.emplace(config_.source, application_name_, Connection::Mode::Normal);
  if (conn_->ok()) {
    if (!cancel_.publish(static_cast<uint64_t>(PQbackendPID(conn_->raw())))) return std::string(kCancelled);
    // The walsender decodes only flushed WAL: under the server's synchronous_commit=off a watermark's commit
    // would wait for the WAL writer (up to wal_writer_delay) before the log could show it, once per chunk.
    // `local` flushes this session's commits at once without waiting for synchronous standbys; the chunk
    // transactions are read-only and write no commit record.
    if (!conn_->query("SET synchronous_commit = local"))
      return "cannot set synchronous_commit for snapshot watermarks: " + conn_->last_error();
    return std::nullopt;
  }
  std::string error = "cannot connect to PostgreSQL at " + config_.source.host + ":" + std::to_string(source_port(config_.source)) +
                      " as " + config_.source.user + " for snapshots: " + conn_->error() +
                      ". Check source.host, source.port, source.user, source.password and pg_hba.conf";
  conn_.reset();
  return error;
}

std::optional<std::string> PgSnapshotReader::ensure_connected() {
  if (cancel_.cancelled()) return std::string(kCancelled);
  if (!cancel_.take_ended() && conn_ && conn_->ok()) return std::nullopt;
  return connect();
}

bool PgSnapshotReader::is_own_table(const QualifiedName& name) const {
  return (name.schema == watermark_.schema && name.table == watermark_.table) ||
         (name.schema == signal_.schema && name.table == signal_.table);
}

std::optional<PgSnapshotReader::Relation> PgSnapshotReader::find_relation(const QualifiedName& name, std::string& error) {
  const auto r = conn_->query(
      "SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')",
      {name.schema, name.table});
  if (!r) {
    error = "cannot look up table " + name.text() + ": " + conn_->last_error();
    return std::nullopt;
  }
  if (PQntuples(r->get()) == 0) {
    error = "table " + name.text() + " does not exist in database " + config_.source.database +
            " (names are the catalog's, case-sensitive: schema.table, or table for schema public)";
    return std::nullopt;
  }
  return Relation{oid_from_text(PQgetvalue(r->get(), 0, 0)), PQgetvalue(r->get(), 0, 1)[0]};
}

// Registers a non-built-in type (and an array's element, a domain's base) from pg_type, as the source does
// for the types of its Relation and Type messages.
std::optional<std::vector<PgSnapshotReader::Column>> PgSnapshotReader::load_columns(uint32_t relation_oid,
                                                                                    std::string& error) {
  // pgoutput skips dropped and (PostgreSQL 12+) generated columns, and (15+) columns outside the
  // publication's column list; it describes each column by atttypid/atttypmod (a domain, not its base).
  const int version = PQserverVersion(conn_->raw());
  std::string sql =
      "SELECT a.attname, a.atttypid, a.atttypmod, format_type(a.atttypid, NULL), a.attnotnull FROM pg_attribute a "
      "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped";
  std::vector<std::string> params = {std::to_string(relation_oid)};
  if (version >= 120000) sql += " AND a.attgenerated = ''";
  if (version >= 150000) {
    sql += " AND NOT EXISTS (SELECT 1 FROM pg_publication p JOIN pg_publication_rel pr ON pr.prpubid = p.oid "
           "WHERE p.pubname = $2 AND pr.prrelid = a.attrelid AND pr.prattrs IS NOT NULL "
           "AND NOT a.attnum = ANY (pr.prattrs))";
    params.push_back(config_.source.postgres.publication);
  }
  const auto r = conn_->query(sql + " ORDER BY a.attnum", params);
  if (!r) {
    error = "cannot read the columns of relation " + std::to_string(relation_oid) + ": " + conn_->last_error();
    return std::nullopt;
  }
  std::vector<Column> columns;
  for (int i = 0; i < PQntuples(r->get()); ++i) {
    Column c;
    c.name = PQgetvalue(r->get(), i, 0);
    c.type_oid = oid_from_text(PQgetvalue(r->get(), i, 1));
    c.typmod = std::stoi(PQgetvalue(r->get(), i, 2));
    c.cast_type = PQgetvalue(r->get(), i, 3);
    c.not_null = std::string(PQgetvalue(r->get(), i, 4)) == "t";
    if (!PgTypeRegistry::builtin(c.type_oid)) register_catalog_type(*conn_, types_, c.type_oid);
    columns.push_back(std::move(c));
  }
  return columns;
}

std::optional<std::vector<PgSnapshotReader::Column>> PgSnapshotReader::layout_columns(const TableLayout& layout,
                                                                                      std::string& error) {
  const QualifiedName name{layout.schema->id.schema, layout.schema->id.table};
  const auto relation = find_relation(name, error);
  if (!relation) return std::nullopt;
  auto current = load_columns(relation->oid, error);
  if (!current) return std::nullopt;
  std::vector<Column> columns;
  for (const auto& wanted : layout.schema->columns) {
    const auto it = std::find_if(current->begin(), current->end(), [&](const Column& c) { return c.name == wanted; });
    if (it == current->end()) {
      error = "column " + wanted + " of " + name.text() + " is gone (the table changed since its snapshot began)";
      return std::nullopt;
    }
    columns.push_back(*it);
  }
  return columns;
}

std::string PgSnapshotReader::grant_sql(const QualifiedName& name, const std::string& privileges) const {
  return "GRANT " + privileges + " ON " + name.sql() + " TO " + quote_identifier(config_.source.user) + ";";
}

void PgSnapshotReader::check_table(const QualifiedName& name, const std::string& what, const std::string& ddl,
                                   const std::vector<std::string>& needed_columns, const std::string& privileges,
                                   bool create, std::vector<std::string>& problems) {
  std::string error;
  auto relation = find_relation(name, error);
  if (!relation) {
    if (conn_->last_error().empty() && create) {
      if (!conn_->query(ddl)) {
        problems.push_back("cannot create the " + what + " table " + name.text() + ": " + conn_->last_error() +
                           "; run as a role that may create it: " + ddl + "; " + grant_sql(name, privileges));
        return;
      }
      relation = find_relation(name, error);
    }
    if (!relation) {
      problems.push_back(conn_->last_error().empty()
                             ? "the " + what + " table " + name.text() + " does not exist: run " + ddl + "; " +
                                   grant_sql(name, privileges) +
                                   " (or set snapshot.create_tables: true)"
                             : error);
      return;
    }
  }
  const auto columns = load_columns(relation->oid, error);
  if (!columns) {
    problems.push_back(error);
    return;
  }
  std::vector<std::string> missing;
  for (const auto& needed : needed_columns)
    if (std::none_of(columns->begin(), columns->end(), [&](const Column& c) { return c.name == needed; }))
      missing.push_back(needed);
  if (!missing.empty())
    problems.push_back("the " + what + " table " + name.text() + " lacks column(s) " + joined(missing, ", ") +
                       ": drop it and create it as " + ddl + ";");
  for (const auto& privilege : {std::string("SELECT"), std::string("INSERT"), std::string("UPDATE")}) {
    if (privileges.find(privilege) == std::string::npos) continue;
    const auto r = conn_->query("SELECT has_table_privilege($1::oid, $2)", {std::to_string(relation->oid), privilege});
    if (!r) {
      problems.push_back("cannot read the privileges on " + name.text() + ": " + conn_->last_error());
      return;
    }
    if (std::string(PQgetvalue(r->get(), 0, 0)) != "t")
      problems.push_back("role " + config_.source.user + " may not " + privilege + " on the " + what + " table " +
                         name.text() + ": run " + grant_sql(name, privileges));
  }
}

std::vector<std::string> PgSnapshotReader::prepare(bool create) {
  if (auto down = ensure_connected()) return {*down};
  std::vector<std::string> problems;
  const std::string watermark_ddl =
      "CREATE TABLE IF NOT EXISTS " + watermark_.sql() + " (pipeline text PRIMARY KEY, mark text NOT NULL)";
  const std::string signal_ddl = "CREATE TABLE IF NOT EXISTS " + signal_.sql() +
                                 " (id text PRIMARY KEY, type text NOT NULL, data text, "
                                 "created timestamptz NOT NULL DEFAULT now())";
  const size_t before = problems.size();
  check_table(watermark_, "watermark", watermark_ddl, {"pipeline", "mark"}, "SELECT, INSERT, UPDATE", create, problems);
  // This pipeline's row: the watermark UPDATE needs it (ON CONFLICT: another instance may insert it too).
  if (problems.size() == before) {
    const std::string insert = "INSERT INTO " + watermark_.sql() + " (pipeline, mark) VALUES (" +
                               quote_literal(config_.name) + ", '') ON CONFLICT DO NOTHING";
    const auto r = conn_->query("SELECT 1 FROM " + watermark_.sql() + " WHERE pipeline = $1", {config_.name});
    if (!r) {
      problems.push_back("cannot read the watermark table " + watermark_.text() + ": " + conn_->last_error());
    } else if (PQntuples(r->get()) == 0) {
      if (!create)
        problems.push_back("the watermark table " + watermark_.text() + " has no row for pipeline " + config_.name +
                           ": run " + insert + ";");
      else if (!conn_->query(insert))
        problems.push_back("cannot insert pipeline " + config_.name + "'s row into " + watermark_.text() + ": " +
                           conn_->last_error() + "; run " + insert + ";");
    }
  }
  check_table(signal_, "signal", signal_ddl, {"id", "type", "data"}, "SELECT, INSERT", create, problems);
  return problems;
}

std::vector<std::string> PgSnapshotReader::signal_table_warnings() {
  if (ensure_connected()) return {};
  // The table's ACL (or its owner's default), PUBLIC included; superusers may write anything anyway.
  const auto r = conn_->query(
      "SELECT DISTINCT coalesce(r.rolname, 'PUBLIC') FROM pg_class c "
      "CROSS JOIN LATERAL aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a "
      "LEFT JOIN pg_roles r ON r.oid = a.grantee "
      "WHERE c.oid = to_regclass($1) AND a.privilege_type = 'INSERT' AND coalesce(r.rolname, '') <> current_user ORDER BY 1",
      {signal_.sql()});
  if (!r || PQntuples(r->get()) == 0) return {};
  std::vector<std::string> others;
  for (int i = 0; i < PQntuples(r->get()); ++i) others.emplace_back(PQgetvalue(r->get(), i, 0));
  std::vector<std::string> quoted;
  for (const auto& o : others) quoted.push_back(o == "PUBLIC" ? o : quote_identifier(o));
  return {"the signal table " + signal_.text() + " may also be written by " + joined(others, ", ") +
          " (and members of those roles): whoever may INSERT there can start, stop and pause snapshots. To leave it to "
          "the roles you choose: REVOKE INSERT ON " + signal_.sql() + " FROM " + joined(quoted, ", ") + "; GRANT INSERT ON " +
          signal_.sql() + " TO <role>; (docs/security.md)"};
}

bool PgSnapshotReader::control_tables_exist() {
  if (ensure_connected()) return false;
  const auto r = conn_->query("SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL",
                              {watermark_.sql(), signal_.sql()});
  return r && PQntuples(r->get()) == 1 && std::string(PQgetvalue(r->get(), 0, 0)) == "t";
}

Fallible<std::vector<TableId>> PgSnapshotReader::captured_tables() {
  if (auto down = ensure_connected()) return Fallible<std::vector<TableId>>::failure(*down);
  const auto r = conn_->query(
      "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
      "AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1, 2");
  if (!r) return Fallible<std::vector<TableId>>::failure("cannot list tables: " + conn_->last_error());
  std::vector<TableId> tables;
  for (int i = 0; i < PQntuples(r->get()); ++i) {
    const QualifiedName name{PQgetvalue(r->get(), i, 0), PQgetvalue(r->get(), i, 1)};
    if (is_own_table(name) || !table_selected(config_.source.tables, name.text())) continue;
    tables.push_back(TableId{config_.source.database, name.schema, name.table});
  }
  return {std::move(tables), {}};
}

Fallible<TableLayout> PgSnapshotReader::describe(const std::string& requested,
                                                 const std::vector<std::string>& surrogate_key) {
  using Failed = Fallible<TableLayout>;
  if (auto down = ensure_connected()) return Failed::failure(*down);
  const QualifiedName name = split(requested);
  std::string error;
  const auto relation = find_relation(name, error);
  if (!relation) return Failed::failure("cannot snapshot " + requested + ": " + error);
  if (is_own_table(name))
    return Failed::failure("cannot snapshot " + name.text() + ": it is tidemark's watermark or signal table");
  if (!table_selected(config_.source.tables, name.text()))
    return Failed::failure("cannot snapshot " + name.text() + ": it is not captured (source.tables does not match it); "
                           "add it to source.tables and to the publication");
  const auto columns = load_columns(relation->oid, error);
  if (!columns) return Failed::failure(error);

  std::vector<std::string> key_names = surrogate_key;
  if (key_names.empty()) {
    const auto r = conn_->query(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)",
        {std::to_string(relation->oid)});
    if (!r) return Failed::failure("cannot read the primary key of " + name.text() + ": " + conn_->last_error());
    for (int i = 0; i < PQntuples(r->get()); ++i) key_names.emplace_back(PQgetvalue(r->get(), i, 0));
    if (key_names.empty())
      return Failed::failure("cannot snapshot " + name.text() + ": it has no primary key; add one, or name unique "
                             "NOT NULL columns as its chunk key: snapshot.surrogate_keys: {'" + name.text() + "': 'col'}");
  }
  auto schema = std::make_shared<TableSchema>();
  schema->id = TableId{config_.source.database, name.schema, name.table};
  for (const auto& c : *columns) {
    schema->columns.push_back(c.name);
    schema->column_info.push_back(pg_column_info(c.type_oid, types_, c.not_null));
  }
  for (const auto& key : key_names) {
    const auto it = std::find(schema->columns.begin(), schema->columns.end(), key);
    if (it == schema->columns.end())
      return Failed::failure("cannot snapshot " + name.text() + ": its key column " + key +
                             (surrogate_key.empty() ? " is not published (the publication's column list leaves it out)"
                                                    : " does not exist; fix snapshot.surrogate_keys for '" + name.text() + "'"));
    const auto index = static_cast<size_t>(it - schema->columns.begin());
    if (std::find(schema->key_columns.begin(), schema->key_columns.end(), index) != schema->key_columns.end())
      return Failed::failure("cannot snapshot " + name.text() + ": key column " + key + " is named twice");
    schema->key_columns.push_back(index);
  }
  // Snapshot records must carry the log's Kafka key, field for field, so they land in the same partition as
  // the row's log records. pgoutput flags the replica identity's columns in column order; under REPLICA
  // IDENTITY FULL the log's record key is the primary key in its own order (relation_cache.cpp).
  const auto identity = conn_->query("SELECT relreplident FROM pg_class WHERE oid = $1::regclass", {name.sql()});
  if (!identity || PQntuples(identity->get()) != 1)
    return Failed::failure("cannot read the replica identity of " + name.text() + ": " + conn_->last_error());
  schema->complete_old_image = std::string(PQgetvalue(identity->get(), 0, 0)) == "f";
  if (!schema->complete_old_image) std::sort(schema->key_columns.begin(), schema->key_columns.end());
  return {TableLayout{std::move(schema), std::move(key_names)}, {}};
}

Fallible<std::optional<KeyText>> PgSnapshotReader::max_key(const TableLayout& layout, const std::string& where) {
  using Failed = Fallible<std::optional<KeyText>>;
  if (auto down = ensure_connected()) return Failed::failure(*down);
  std::string error;
  const auto columns = layout_columns(layout, error);
  if (!columns) return Failed::failure(error);
  const QualifiedName name{layout.schema->id.schema, layout.schema->id.table};
  if (!where.empty()) {
    if (auto bad = check_row_filter(where, layout.schema->columns, sql_dialect()))
      return Failed::failure("the condition for " + name.text() + " is not allowed: " + *bad);
  }
  const std::string filter = where.empty() ? "" : "(" + where + ")";
  if (auto begun = begin_read_only("READ COMMITTED")) return Failed::failure(*begun);
  auto fail = [&](std::string why) {
    conn_->query("ROLLBACK");
    return Failed::failure(std::move(why));
  };

  std::vector<std::string> nullable;
  for (const auto& key : layout.key_names)
    for (const auto& c : *columns)
      if (c.name == key && !c.not_null) nullable.push_back(quote_identifier(key) + " IS NULL");
  if (!nullable.empty()) {
    const auto r = conn_->query_one_statement("SELECT EXISTS (SELECT 1 FROM " + name.sql() + " WHERE " +
                                (filter.empty() ? "" : filter + " AND ") + "(" + joined(nullable, " OR ") + "))");
    if (!r) return fail("cannot check the keys of " + name.text() + ": " + conn_->last_error());
    if (std::string(PQgetvalue(r->get(), 0, 0)) == "t")
      return fail("cannot snapshot " + name.text() + ": rows" + (where.empty() ? "" : " matching the condition") +
                             " have NULL in key column(s) " + joined(layout.key_names, ", ") +
                             ", so the key does not identify them; choose NOT NULL unique columns in "
                             "snapshot.surrogate_keys or exclude those rows with the request's condition");
  }
  const auto r = conn_->query_one_statement("SELECT " + key_list(layout.key_names) + " FROM " + name.sql() +
                              (filter.empty() ? "" : " WHERE " + filter) + " ORDER BY " +
                              key_list(layout.key_names, " DESC") + " LIMIT 1");
  if (!r) return fail("cannot read the largest key of " + name.text() + ": " + conn_->last_error());
  if (!conn_->query("COMMIT")) return Failed::failure("cannot commit: " + conn_->last_error());
  if (PQntuples(r->get()) == 0) return Failed{std::optional<std::optional<KeyText>>(std::in_place), {}};
  KeyText key;
  for (int i = 0; i < PQnfields(r->get()); ++i)
    key.push_back(PQgetisnull(r->get(), 0, i) ? std::nullopt : std::optional<std::string>(PQgetvalue(r->get(), 0, i)));
  return Failed{std::optional<std::optional<KeyText>>(std::in_place, std::move(key)), {}};
}

std::optional<std::string> PgSnapshotReader::write_watermark(const std::string& mark) {
  if (auto down = ensure_connected()) return down;
  const auto r =
      conn_->query("UPDATE " + watermark_.sql() + " SET mark = $1 WHERE pipeline = $2", {mark, config_.name});
  if (!r) return "cannot write the watermark to " + watermark_.text() + ": " + conn_->last_error();
  if (std::string(PQcmdTuples(r->get())) == "0")
    return "the watermark table " + watermark_.text() + " has no row for pipeline " + config_.name + ": run INSERT INTO " +
           watermark_.sql() + " (pipeline, mark) VALUES (" + quote_literal(config_.name) + ", '');";
  return std::nullopt;
}

// PostgreSQL writes a commit record to the WAL before it makes the transaction visible (clog, then
// ProcArray; with synchronous replication the gap lasts until the standby answers). So a transaction that
// precedes the low watermark in the log can still be invisible to a snapshot taken right after the
// watermark's commit: its change passes through before the window, and the chunk would then emit the older
// row (time travel; the fold test caught it). Every such transaction is listed as running in a snapshot
// taken now; waiting until all of those have ended makes every commit before the low watermark visible to
// the chunk's SELECT. Usually the wait is a single query; a transaction left open (idle in transaction, a
// prepared transaction) holds the snapshot, never the log, and is named in a warning.
std::optional<std::string> PgSnapshotReader::wait_for_finished_commits(const std::stop_token& stop) {
  const auto running = conn_->query(
      "SELECT '{' || coalesce(string_agg(x::text, ','), '') || '}' FROM pg_snapshot_xip(pg_current_snapshot()) AS x");
  if (!running) return "cannot read the running transactions: " + conn_->last_error();
  const std::string xids = PQgetvalue(running->get(), 0, 0);
  if (xids == "{}") return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  auto next_warning = started + std::chrono::seconds(10);
  for (int attempt = 0;; ++attempt) {
    const auto r = conn_->query(
        "SELECT coalesce(string_agg(x::text, ','), '') FROM pg_snapshot_xip(pg_current_snapshot()) AS x "
        "WHERE x = ANY($1::xid8[])",
        {xids});
    if (!r) return "cannot read the running transactions: " + conn_->last_error();
    const std::string still = PQgetvalue(r->get(), 0, 0);
    if (still.empty()) return std::nullopt;
    if (stop.stop_requested()) return std::string("stopping");
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_warning) {
      spdlog::warn("snapshot chunk waits for transaction(s) {} (open since before the low watermark) to end; see "
                   "pg_stat_activity.backend_xid and pg_prepared_xacts",
                   still);
      next_warning = now + std::chrono::seconds(10);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::min(100 * (attempt + 1), 20'000)));
  }
}

Fallible<Chunk> PgSnapshotReader::read_chunk(const ChunkQuery& query) {
  using Failed = Fallible<Chunk>;
  if (!query.layout || !query.layout->schema) return Failed::failure("read_chunk: no table layout");
  if (query.limit == 0) return Failed::failure("read_chunk: a chunk needs a limit above 0");
  if (auto down = ensure_connected()) return Failed::failure(*down);
  const TableLayout& layout = *query.layout;
  const QualifiedName name{layout.schema->id.schema, layout.schema->id.table};
  const size_t key_size = layout.key_names.size();
  if (key_size == 0) return Failed::failure("read_chunk: " + name.text() + " has no chunk key");
  for (const auto& key : layout.key_names)
    if (std::find(layout.schema->columns.begin(), layout.schema->columns.end(), key) == layout.schema->columns.end())
      return Failed::failure("read_chunk: key column " + key + " is not a column of the layout of " + name.text());
  for (const auto* bound : {&query.after, &query.upto}) {
    if (!*bound) continue;
    if ((*bound)->size() != key_size)
      return Failed::failure("read_chunk: a key bound of " + name.text() + " has " + std::to_string((*bound)->size()) +
                             " values, the key has " + std::to_string(key_size) + " columns");
    if (std::any_of((*bound)->begin(), (*bound)->end(), [](const auto& v) { return !v.has_value(); }))
      return Failed::failure("read_chunk: a key bound of " + name.text() + " holds NULL, which orders nowhere");
  }

  if (!query.where.empty()) {
    if (auto bad = check_row_filter(query.where, layout.schema->columns, sql_dialect()))
      return Failed::failure("the condition for " + name.text() + " is not allowed: " + *bad);
  }

  if (auto error = wait_for_finished_commits(query.stop)) return Failed::failure(*error);
  // The catalog types of the layout's columns, read once per described layout (the worker describes the
  // table again at least every second) rather than with two catalog queries per chunk; the result's own
  // column types below catch a type changed in between.
  if (!chunk_columns_ || chunk_columns_->schema != layout.schema) {
    std::string error;
    auto loaded = layout_columns(layout, error);
    if (!loaded) {
      chunk_columns_.reset();
      return Failed::failure(error);
    }
    chunk_columns_ = ChunkColumns{layout.schema, std::move(*loaded), {}};
  }
  const std::vector<Column>* columns = &chunk_columns_->columns;

  // (k1, k2) > ($1::t1, $2::t2): the database's own row comparison, in its collation.
  std::vector<std::string> params;
  auto bound_row = [&](const KeyText& key) {
    std::vector<std::string> casts;
    for (size_t i = 0; i < key_size; ++i) {
      const auto it = std::find_if(columns->begin(), columns->end(),
                                   [&](const Column& c) { return c.name == layout.key_names[i]; });
      params.push_back(*key[i]);
      casts.push_back("$" + std::to_string(params.size()) + "::" + (it == columns->end() ? "text" : it->cast_type));
    }
    return "(" + joined(casts, ", ") + ")";
  };
  std::vector<std::string> conditions;
  const std::string key_row = "(" + key_list(layout.key_names) + ")";
  if (query.after) conditions.push_back(key_row + " > " + bound_row(*query.after));
  if (query.upto) conditions.push_back(key_row + " <= " + bound_row(*query.upto));
  if (!query.where.empty()) conditions.push_back("(" + query.where + ")");
  const std::string sql = "SELECT " + key_list(layout.schema->columns) + " FROM " + name.sql() +
                          (conditions.empty() ? "" : " WHERE " + joined(conditions, " AND ")) + " ORDER BY " +
                          key_list(layout.key_names) + " LIMIT " + std::to_string(query.limit);
  // The read-only transaction with its timeout, the SELECT and the COMMIT in one round trip.
  const auto r = conn_->query_in_transaction(begin_read_only_sql("READ COMMITTED"), {{statement_timeout_sql(), {}}, {sql, params}});
  if (!r) return Failed::failure("cannot read a chunk of " + name.text() + ": " + conn_->last_error());

  PGresult* result = r->get();
  std::vector<Oid> result_types;
  for (int c = 0; c < PQnfields(result); ++c) result_types.push_back(PQftype(result, c));
  if (chunk_columns_->result_types.empty()) {
    chunk_columns_->result_types = result_types;
  } else if (chunk_columns_->result_types != result_types) {  // ALTER COLUMN ... TYPE since the columns were read
    std::string error;
    auto loaded = layout_columns(layout, error);
    if (!loaded) {
      chunk_columns_.reset();
      return Failed::failure(error);
    }
    chunk_columns_ = ChunkColumns{layout.schema, std::move(*loaded), result_types};
    columns = &chunk_columns_->columns;
  }
  if (static_cast<size_t>(PQnfields(result)) != columns->size())
    return Failed::failure("chunk of " + name.text() + ": the SELECT returned " + std::to_string(PQnfields(result)) +
                           " columns, the layout has " + std::to_string(columns->size()));
  Chunk chunk;
  const int rows = PQntuples(result);
  chunk.rows.reserve(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    Row row;
    row.reserve(columns->size());
    for (size_t c = 0; c < columns->size(); ++c) {
      const int field = static_cast<int>(c);
      if (PQgetisnull(result, i, field)) {
        row.emplace_back(Null{});
        continue;
      }
      const Column& column = (*columns)[c];
      const std::string_view text(PQgetvalue(result, i, field), static_cast<size_t>(PQgetlength(result, i, field)));
      PgParseResult parsed = parse_pg_text(column.type_oid, column.typmod, text, types_);
      if (!parsed)
        return Failed::failure("chunk of " + name.text() + ", column " + column.name + ": " + parsed.error().to_string());
      row.push_back(std::move(parsed).value());
    }
    chunk.rows.push_back(std::move(row));
  }
  if (rows > 0) {
    for (const auto& key : layout.key_names) {
      const auto it = std::find(layout.schema->columns.begin(), layout.schema->columns.end(), key);
      const int field = static_cast<int>(it - layout.schema->columns.begin());
      chunk.last_key.push_back(PQgetisnull(result, rows - 1, field)
                                   ? std::nullopt
                                   : std::optional<std::string>(PQgetvalue(result, rows - 1, field)));
    }
  }
  return {std::move(chunk), {}};
}

std::optional<std::string> PgSnapshotReader::insert_signal(const std::string& id, const std::string& type,
                                                           const std::string& data) {
  if (auto down = ensure_connected()) return down;
  if (!conn_->query("INSERT INTO " + signal_.sql() + " (id, type, data) VALUES ($1, $2, $3)", {id, type, data}))
    return "cannot insert signal " + id + " into " + signal_.text() + ": " + conn_->last_error();
  return std::nullopt;
}

}  // namespace tidemark::pg
