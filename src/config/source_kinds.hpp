#pragma once
// Each source type described once. The loader, the control tables and the factories ask this table
// instead of comparing source.type with names, so a new database is its folder under src/source/ plus
// one row here (and its line in source_factory.cpp).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tidemark {

enum class SourceKind { Generator, Postgres, MySql, Kafka };

// How the database qualifies a table: PostgreSQL connects to one database and names tables
// schema.table; MySQL names them database.table.
enum class TableQualifier { Schema, Database };

struct SourceDescriptor {
  SourceKind kind;
  std::string_view type;     // the value of source.type
  std::string_view product;  // for messages: "PostgreSQL", "MySQL/MariaDB"
  bool is_database;          // a server, with source.user, source.tables, TLS and snapshots
  int default_port;          // when source.port is 0
  bool requires_database;    // source.database must be set
  TableQualifier qualifier;
  std::string_view default_schema;  // where an unqualified table name lives (TableQualifier::Schema)
  std::string_view topic_template;  // the default sink.kafka.topic_template
  std::string_view tls_mode_env;    // the environment variable whose value is the default source.tls.mode
  std::string_view tls_ca_env;      // the environment variable that stands in for source.tls.ca
};

std::span<const SourceDescriptor> source_descriptors();
std::vector<std::string> source_type_names();

// The row of source.type; an unknown type (refused by the loader) gets a row that supports nothing.
const SourceDescriptor& describe_source(const DatabaseEndpoint& source);
const SourceDescriptor& describe_source(SourceKind kind);

// source.port, or the database's usual port when it is 0.
int source_port(const DatabaseEndpoint& source);

// A message written with the source's key names ("set source.tls.ca to ...") for an endpoint set under
// `settings` ("sink.database"): every "source." key becomes "<settings>.".
std::string rename_settings(std::string message, std::string_view settings);

}  // namespace tidemark
