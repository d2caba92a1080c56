#include "sink/database/table_plan.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "db/row_filter.hpp"
#include "sink/database/sql_values.hpp"

namespace tidemark::dbsink {

namespace {

bool same_name_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The column called `name`: the same name, else the only one that differs in case only (MySQL's names are
// case-insensitive, PostgreSQL folds unquoted names to lower case).
template <typename Names, typename NameOf>
std::optional<size_t> find_name(const Names& names, const std::string& name, NameOf name_of) {
  for (size_t i = 0; i < names.size(); ++i)
    if (name_of(names[i]) == name) return i;
  std::optional<size_t> found;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!same_name_ignoring_case(name_of(names[i]), name)) continue;
    if (found) return std::nullopt;
    found = i;
  }
  return found;
}

std::optional<size_t> source_column(const TableSchema& source, const std::string& name) {
  return find_name(source.columns, name, [](const std::string& n) -> const std::string& { return n; });
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string quoted(Dialect dialect, const std::string& name) {
  std::string out;
  append_identifier(out, dialect, name);
  return out;
}

}  // namespace

std::string natural_type(Dialect dialect, const ColumnInfo* info) {
  const bool pg = dialect == Dialect::Postgres;
  switch (info ? info->kind : ColumnKind::Unknown) {
    case ColumnKind::Boolean: return pg ? "boolean" : "tinyint(1)";
    case ColumnKind::Int16: return "smallint";
    case ColumnKind::Int32: return pg ? "integer" : "int";
    case ColumnKind::Int64: return "bigint";
    case ColumnKind::UInt64: return pg ? "numeric" : "bigint unsigned";
    case ColumnKind::Float32: return pg ? "real" : "float";
    case ColumnKind::Float64: return pg ? "double precision" : "double";
    case ColumnKind::Decimal: return pg ? "numeric" : "decimal(65,30)";
    case ColumnKind::Bytes: return pg ? "bytea" : "longblob";
    case ColumnKind::Date: return "date";
    case ColumnKind::Time: return pg ? "time" : "time(6)";
    case ColumnKind::Timestamp: return pg ? "timestamp" : "datetime(6)";
    case ColumnKind::TimestampTz: return pg ? "timestamptz" : "datetime(6)";
    case ColumnKind::Interval: return pg ? "interval" : "text";
    case ColumnKind::Year: return pg ? "integer" : "int";
    case ColumnKind::Json: return pg ? "jsonb" : "json";
    case ColumnKind::Uuid: return pg ? "uuid" : "char(36)";
    default: return pg ? "text" : "longtext";
  }
}

TemplateResult parse_template(const std::string& sql, const TableSchema& source, Dialect dialect) {
  TemplateResult out;
  std::string checked;  // `sql` with every reference as a quoted stand-in the check knows as a column
  std::vector<std::string> stand_ins;
  std::string text;
  for (size_t i = 0; i < sql.size();) {
    const char c = sql[i];
    if (c == '\'') {  // a string literal, '' inside
      size_t end = i + 1;
      while (end < sql.size()) {
        if (sql[end] != '\'') {
          ++end;
        } else if (end + 1 < sql.size() && sql[end + 1] == '\'') {
          end += 2;
        } else {
          ++end;
          break;
        }
      }
      text.append(sql, i, end - i);
      checked.append(sql, i, end - i);
      i = end;
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {  // the :: cast
      text += "::";
      checked += "::";
      i += 2;
    } else if (c == ':' && i + 1 < sql.size() && word_char(sql[i + 1]) && (i == 0 || sql[i - 1] != ':')) {
      size_t end = i + 1;
      while (end < sql.size() && word_char(sql[end])) ++end;
      const std::string name = sql.substr(i + 1, end - i - 1);
      const auto column = source_column(source, name);
      if (!column) {
        out.error = ":" + name + " is not a column of the source table " + source.id.to_string();
        return out;
      }
      out.sql.text.push_back(std::move(text));
      text.clear();
      out.sql.refs.push_back(*column);
      stand_ins.push_back("tidemark_value_" + std::to_string(stand_ins.size()));
      checked += quoted(dialect, stand_ins.back());
      i = end;
    } else {
      text += c;
      checked += c;
      ++i;
    }
  }
  out.sql.text.push_back(std::move(text));
  const SqlDialect check_dialect{dialect == Dialect::Postgres ? '"' : '`', dialect == Dialect::Postgres, dialect == Dialect::MySql};
  if (auto error = check_row_filter(checked, stand_ins, check_dialect)) {
    const bool bare_name = error->find("column") != std::string::npos;
    out.error = "'" + sql.substr(0, 80) + "': " + *error + (bare_name ? " (name source values as :column)" : "");
    out.sql = {};
  }
  return out;
}

std::pair<std::string, std::string> target_of(const TableId& source, const TableMapping* mapping,
                                              const std::string& default_schema) {
  if (!mapping || mapping->target.empty()) return {default_schema, source.table};
  const size_t dot = mapping->target.find('.');
  if (dot == std::string::npos) return {default_schema, mapping->target};
  return {mapping->target.substr(0, dot), mapping->target.substr(dot + 1)};
}

std::string mapped_name(const TableId& source) {
  return (source.schema.empty() ? source.database : source.schema) + "." + source.table;
}

void order_referenced_first(std::vector<TableId>& tables, const std::vector<TableMapping>& mappings) {
  // rank: 0 without references, else one more than the highest rank it references (cycles stop at the
  // number of mappings).
  std::function<size_t(const std::string&, size_t)> rank = [&](const std::string& name, size_t depth) -> size_t {
    size_t highest = 0;
    if (depth > mappings.size()) return highest;
    for (const auto& m : mappings)
      if (m.source == name)
        for (const auto& [column, parent] : m.references) highest = std::max(highest, 1 + rank(parent, depth + 1));
    return highest;
  };
  std::vector<std::pair<size_t, TableId>> ranked;
  for (auto& t : tables) ranked.emplace_back(rank(mapped_name(t), 0), std::move(t));
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  tables.clear();
  for (auto& [r, t] : ranked) tables.push_back(std::move(t));
}

const TableMapping* find_mapping(const std::vector<TableMapping>& mappings, const TableId& source) {
  const std::string name = mapped_name(source);
  for (const auto& m : mappings)
    if (m.source == name) return &m;
  return nullptr;
}

PlanResult plan_table(Dialect dialect, const TableSchemaPtr& source, const TableMapping* mapping,
                      const std::string& target_schema, const std::string& target_table, const TargetTable& described,
                      bool apply_ties, bool keep_changed) {
  PlanResult out;
  const std::string label = target_schema + "." + target_table;
  const std::string from = "source table " + source->id.to_string() + " -> target table " + label + ": ";
  std::vector<std::string> problems;
  if (described.columns.empty()) {
    out.error = from + "the target table does not exist; create it (sink.database does not create tables)";
    return out;
  }
  if (described.primary_key.empty())
    problems.push_back("the target table has no primary key, which the sink needs to apply updates and deletes and "
                       "to make replays idempotent; add one");
  TablePlan plan;
  plan.source = source;
  plan.label = label;
  plan.target = quoted(dialect, target_schema) + "." + quoted(dialect, target_table);
  const auto target_column = [&](const std::string& name) {
    return find_name(described.columns, name, [](const TargetColumn& c) -> const std::string& { return c.name; });
  };
  const bool generated_key = mapping && mapping->generated_key;
  if (generated_key) {
    if (described.primary_key.size() != 1) {
      problems.push_back("generated_key needs a target primary key of one column (it has " +
                         std::to_string(described.primary_key.size()) + ")");
    } else {
      const auto t = target_column(described.primary_key[0]);
      if (t && !described.columns[*t].fills_itself)
        problems.push_back("generated_key: the target's key column " + described.primary_key[0] + " has no " +
                           (dialect == Dialect::Postgres ? "identity or default" : "AUTO_INCREMENT") +
                           " to fill it in; add one");
      if (t) {
        plan.generated_key = true;
        plan.generated_name = quoted(dialect, described.columns[*t].name);
        plan.generated_type = described.columns[*t].type;
      }
    }
    if (source->key_columns.empty())
      problems.push_back("generated_key: the source table has no primary key to pair with the target's");
    plan.key = source->key_columns;
    plan.map_name = mapped_name(source->id);
  }
  const auto is_generated = [&](const std::string& name) {
    return generated_key && !described.primary_key.empty() && same_name_ignoring_case(name, described.primary_key[0]);
  };
  std::vector<std::string> target_names;  // unquoted, parallel to plan.values
  const auto add_value = [&](const TargetColumn& column, std::optional<size_t> copied, SqlTemplate expression) {
    plan.values.push_back(TargetValue{quoted(dialect, column.name), column.type, copied, std::move(expression), "",
                                      LiteralType(dialect, column.type)});
    target_names.push_back(column.name);
  };
  if (!mapping || mapping->columns.empty()) {
    for (size_t i = 0; i < source->columns.size(); ++i) {
      const auto t = target_column(source->columns[i]);
      if (!t) {
        problems.push_back("the target table has no column " + source->columns[i] +
                           "; add it to the target table, or list the columns to write in sink.database.tables");
        continue;
      }
      if (described.columns[*t].generated) continue;  // computed by the target from the other columns
      if (is_generated(described.columns[*t].name)) continue;
      add_value(described.columns[*t], i, {});
    }
  } else {
    for (const auto& [name, value] : mapping->columns) {
      const auto t = target_column(name);
      if (!t) {
        problems.push_back("columns: the target table has no column " + name);
        continue;
      }
      if (described.columns[*t].generated) {
        problems.push_back("columns: " + name + " is a generated column of the target table; it cannot be written");
        continue;
      }
      if (is_generated(described.columns[*t].name)) {
        problems.push_back("columns: " + name + " is the key the target generates (generated_key); leave it out");
        continue;
      }
      if (const auto copied = source_column(*source, value)) {
        add_value(described.columns[*t], *copied, {});
        continue;
      }
      TemplateResult parsed = parse_template(value, *source, dialect);
      if (!parsed.error.empty()) {
        const bool plain_name = std::all_of(value.begin(), value.end(), word_char);
        problems.push_back("columns: " + name + ": " +
                           (plain_name ? value + " is not a column of the source table " + source->id.to_string()
                                       : parsed.error));
        continue;
      }
      add_value(described.columns[*t], std::nullopt, std::move(parsed.sql));
    }
  }
  if (mapping && !mapping->where.empty()) {
    TemplateResult parsed = parse_template(mapping->where, *source, dialect);
    if (!parsed.error.empty()) problems.push_back("where: " + parsed.error);
    else plan.filter = std::move(parsed.sql);
  }
  if (generated_key && plan.values.empty())
    problems.push_back("generated_key: no column is written besides the generated key; map at least one");
  if (mapping)
    for (const auto& [referencing, table] : mapping->references) {
      const std::string& column = referencing;  // a lambda may not capture a structured binding (clang 14)
      const auto it = std::find_if(target_names.begin(), target_names.end(),
                                   [&](const std::string& n) { return same_name_ignoring_case(n, column); });
      if (it == target_names.end() || !plan.values[static_cast<size_t>(it - target_names.begin())].source) {
        problems.push_back("references: " + column + " must be a written target column copied from a source column");
        continue;
      }
      plan.values[static_cast<size_t>(it - target_names.begin())].reference = table;
      plan.references = true;
    }
  for (const auto& key_column : generated_key ? std::vector<std::string>{} : described.primary_key) {
    const auto it = std::find(target_names.begin(), target_names.end(), key_column);
    if (it == target_names.end() || !plan.values[static_cast<size_t>(it - target_names.begin())].source) {
      problems.push_back("the target's primary key column " + key_column + " must be copied from a source column " +
                         "(the sink finds rows by it)");
      continue;
    }
    const auto at = static_cast<size_t>(it - target_names.begin());
    plan.key.push_back(*plan.values[at].source);
    plan.key_values.push_back(at);
  }
  plan.apply_ties = apply_ties;
  if (mapping && !mapping->version.empty()) {
    const auto it = std::find_if(target_names.begin(), target_names.end(),
                                 [&](const std::string& n) { return same_name_ignoring_case(n, mapping->version); });
    const auto at = static_cast<size_t>(it - target_names.begin());
    if (it == target_names.end())
      problems.push_back("version: " + mapping->version + " is not a written column of the target table");
    else if (std::find(plan.key_values.begin(), plan.key_values.end(), at) != plan.key_values.end())
      problems.push_back("version: " + mapping->version + " is part of the key; name a version or updated_at column");
    else
      plan.version = at;
  }
  if (!problems.empty()) {
    for (const auto& p : problems) out.error += (out.error.empty() ? "" : "\n") + from + p;
    return out;
  }

  std::string names;
  for (size_t i = 0; i < plan.values.size(); ++i) names += (i ? ", " : "") + plan.values[i].name;
  if (plan.generated_key) {  // rows go one by one (DatabaseSink::add_mapped)
    plan.insert_head = "INSERT INTO " + plan.target + " (" + names + ") ";
    out.plan = std::move(plan);
    return out;
  }
  std::vector<std::string> key_names;
  for (const size_t v : plan.key_values) key_names.push_back(plan.values[v].name);
  plan.key_list = key_names.size() == 1 ? key_names[0] : "(";
  if (key_names.size() > 1) {
    for (size_t i = 0; i < key_names.size(); ++i) plan.key_list += (i ? ", " : "") + key_names[i];
    plan.key_list += ")";
  }
  plan.derived = !plan.filter.empty() ||
                 std::any_of(plan.values.begin(), plan.values.end(), [](const TargetValue& v) { return !v.source; });
  if (!plan.derived) {
    plan.insert_head = "INSERT INTO " + plan.target + " (" + names + ") VALUES ";
  } else {
    // The source values the statement needs, each once: copied ones typed as their target column.
    const auto carry = [&](size_t column, const std::string& type, const std::string& reference) {
      if (std::find(plan.carried.begin(), plan.carried.end(), column) != plan.carried.end()) return;
      plan.carried.push_back(column);
      plan.carried_names.push_back(quoted(dialect, source->columns[column]));
      plan.carried_types.push_back(type);
      plan.carried_references.push_back(reference);
    };
    for (const auto& v : plan.values)
      if (v.source) carry(*v.source, v.type, v.reference);
    const auto info = [&](size_t column) { return column < source->column_info.size() ? &source->column_info[column] : nullptr; };
    for (const auto& v : plan.values)
      for (const size_t r : v.expression.refs) carry(r, natural_type(dialect, info(r)), "");
    for (const size_t r : plan.filter.refs) carry(r, natural_type(dialect, info(r)), "");
    std::string select;
    for (size_t i = 0; i < plan.values.size(); ++i) {
      select += i ? ", " : "";
      const TargetValue& v = plan.values[i];
      if (v.source) {
        select += "v." + quoted(dialect, source->columns[*v.source]);
        continue;
      }
      for (size_t t = 0; t < v.expression.text.size(); ++t) {
        select += v.expression.text[t];
        if (t < v.expression.refs.size()) select += "v." + quoted(dialect, source->columns[v.expression.refs[t]]);
      }
    }
    const bool pg = dialect == Dialect::Postgres;
    for (size_t t = 0; t < plan.filter.text.size(); ++t) {
      plan.filter_sql += plan.filter.text[t];
      if (t < plan.filter.refs.size()) plan.filter_sql += "v." + quoted(dialect, source->columns[plan.filter.refs[t]]);
    }
    std::string carried_list;
    for (size_t i = 0; i < plan.carried_names.size(); ++i) carried_list += (i ? ", " : "") + plan.carried_names[i];
    const std::string rows_open = pg ? "(VALUES " : "(";
    const std::string rows_close = pg ? ") AS v(" + carried_list + ")" : ") AS v";
    plan.row_separator = pg ? ", " : " UNION ALL ";
    plan.insert_head = "INSERT INTO " + plan.target + " (" + names + ") SELECT " + select + " FROM " + rows_open;
    plan.insert_tail = rows_close + (plan.filter.empty() ? "" : " WHERE " + plan.filter_sql);
    if (!plan.filter.empty()) {
      std::string match;
      for (size_t k = 0; k < plan.key.size(); ++k)
        match += (k ? " AND " : "") + std::string("tt.") + plan.values[plan.key_values[k]].name + " = v." +
                 quoted(dialect, source->columns[plan.key[k]]);
      const std::string leaves = "NOT coalesce((" + plan.filter_sql + "), false)";
      plan.leave_head = pg ? "DELETE FROM " + plan.target + " AS tt USING " + rows_open
                           : "DELETE tt FROM " + plan.target + " AS tt JOIN " + rows_open;
      plan.leave_tail = pg ? rows_close + " WHERE " + match + " AND " + leaves
                           : rows_close + " ON " + match + " WHERE " + leaves;
    }
  }
  plan.keep_changed = keep_changed;
  std::vector<std::string> set;
  const std::string newer = apply_ties ? " >= " : " > ";
  const std::string version_name = plan.version ? plan.values[*plan.version].name : "";
  for (size_t i = 0; i < plan.values.size(); ++i) {
    if (std::find(plan.key_values.begin(), plan.key_values.end(), i) != plan.key_values.end()) continue;
    if (plan.version && i == *plan.version) continue;  // last: MySQL reads the columns assigned before as updated
    if (keep_changed) continue;  // an existing row stays as it is
    const std::string& n = plan.values[i].name;
    if (dialect == Dialect::Postgres)
      set.push_back(n + " = EXCLUDED." + n);
    else if (plan.version)  // the target's own columns qualified: the derived table v may have the same names
      set.push_back(n + " = IF(VALUES(" + version_name + ")" + newer + plan.target + "." + version_name + ", VALUES(" + n +
                    "), " + plan.target + "." + n + ")");
    else
      set.push_back(n + " = VALUES(" + n + ")");
  }
  if (plan.version)
    set.push_back(dialect == Dialect::Postgres ? version_name + " = EXCLUDED." + version_name
                                               : version_name + " = GREATEST(" + plan.target + "." + version_name +
                                                     ", VALUES(" + version_name + "))");
  if (dialect == Dialect::Postgres) {
    std::string conflict = "(";
    for (size_t i = 0; i < key_names.size(); ++i) conflict += (i ? ", " : "") + key_names[i];
    conflict += ")";
    plan.upsert_tail = " ON CONFLICT " + conflict + (set.empty() ? " DO NOTHING" : " DO UPDATE SET ");
  } else {
    // ON DUPLICATE KEY fires on any unique key: a row that matches another one by a unique key other than
    // the primary key would be merged into it. The first assignment refuses that (NULL into a key column:
    // an error under the sink's strict sql_mode); for the row of the same primary key it sets the key to
    // itself, which also makes the duplicate a no-op for a table of key columns only.
    std::string same_key;
    for (size_t i = 0; i < key_names.size(); ++i)
      same_key += (i ? " AND " : "") + plan.target + "." + key_names[i] + " = VALUES(" + key_names[i] + ")";
    set.insert(set.begin(), key_names[0] + " = IF(" + same_key + ", " + plan.target + "." + key_names[0] + ", NULL)");
    plan.upsert_tail = " ON DUPLICATE KEY UPDATE ";
  }
  for (size_t i = 0; i < set.size(); ++i) plan.upsert_tail += (i ? ", " : "") + set[i];
  if (plan.version && dialect == Dialect::Postgres) {
    plan.upsert_tail += " WHERE EXCLUDED." + version_name + newer + plan.target + "." + version_name;
  }
  plan.insert_tail += plan.upsert_tail;
  out.plan = std::move(plan);
  return out;
}

void plan_copy(TablePlan& plan, Dialect dialect, const std::string& temp_table) {
  const bool plain = std::all_of(plan.values.begin(), plan.values.end(),
                                 [](const TargetValue& v) { return v.source && v.reference.empty(); });
  if (dialect != Dialect::Postgres || plan.generated_key || plan.derived || plan.references || !plain) return;
  std::string names;
  for (size_t i = 0; i < plan.values.size(); ++i) names += (i ? ", " : "") + plan.values[i].name;
  plan.copy_table = "pg_temp." + temp_table;
  // The target's own column types (typmods and domains too), so COPY reads each field as the upsert would.
  // ON COMMIT DELETE ROWS: every target transaction starts with it empty; TRUNCATE for a second load in one.
  plan.copy_direct = "COPY " + plan.target + " (" + names + ") FROM STDIN";
  plan.copy_open = "CREATE TEMPORARY TABLE IF NOT EXISTS " + plan.copy_table + " ON COMMIT DELETE ROWS AS SELECT " +
                   names + " FROM " + plan.target + " WITH NO DATA;\nTRUNCATE " + plan.copy_table + ";\nCOPY " +
                   plan.copy_table + " (" + names + ") FROM STDIN";
  plan.copy_apply = "INSERT INTO " + plan.target + " (" + names + ") SELECT " + names + " FROM " + plan.copy_table +
                    plan.upsert_tail;
}

}  // namespace tidemark::dbsink
