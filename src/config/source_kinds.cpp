#include "config/source_kinds.hpp"

#include <array>

namespace tidemark {

namespace {

constexpr std::array kSources = {
    SourceDescriptor{SourceKind::Generator, "generator", "the generator", false, 0, false, TableQualifier::Database,
                     "", "{prefix}.{database}.{table}", "", ""},
    SourceDescriptor{SourceKind::Postgres, "postgres", "PostgreSQL", true, 5432, true, TableQualifier::Schema, "public",
                     "{prefix}.{schema}.{table}", "PGSSLMODE", "PGSSLROOTCERT"},
    SourceDescriptor{SourceKind::MySql, "mysql", "MySQL/MariaDB", true, 3306, false, TableQualifier::Database, "",
                     "{prefix}.{database}.{table}", "", ""},
};

constexpr SourceDescriptor kUnknown{SourceKind::Generator, "", "an unknown source", false, 0, false,
                                    TableQualifier::Database, "", "{prefix}.{database}.{table}", "", ""};

}  // namespace

std::span<const SourceDescriptor> source_descriptors() { return kSources; }

std::vector<std::string> source_type_names() {
  std::vector<std::string> names;
  for (const SourceDescriptor& d : kSources) names.emplace_back(d.type);
  return names;
}

const SourceDescriptor& describe_source(const SourceConfig& source) {
  for (const SourceDescriptor& d : kSources)
    if (d.type == source.type) return d;
  return kUnknown;
}

const SourceDescriptor& describe_source(SourceKind kind) {
  for (const SourceDescriptor& d : kSources)
    if (d.kind == kind) return d;
  return kUnknown;
}

int source_port(const SourceConfig& source) {
  return source.port > 0 ? static_cast<int>(source.port) : describe_source(source).default_port;
}

}  // namespace tidemark
