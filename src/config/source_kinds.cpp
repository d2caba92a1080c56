#include "config/source_kinds.hpp"

#include <array>
#include <cctype>

namespace tidemark {

namespace {

constexpr std::array kSources = {
    SourceDescriptor{SourceKind::Generator, "generator", "the generator", false, 0, false, TableQualifier::Database,
                     "", "{prefix}.{database}.{table}", "", ""},
    SourceDescriptor{SourceKind::Postgres, "postgres", "PostgreSQL", true, 5432, true, TableQualifier::Schema, "public",
                     "{prefix}.{schema}.{table}", "PGSSLMODE", "PGSSLROOTCERT"},
    SourceDescriptor{SourceKind::MySql, "mysql", "MySQL/MariaDB", true, 3306, false, TableQualifier::Database, "",
                     "{prefix}.{database}.{table}", "", ""},
    SourceDescriptor{SourceKind::Kafka, "kafka", "Kafka", false, 0, false, TableQualifier::Database, "",
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

const SourceDescriptor& describe_source(const DatabaseEndpoint& source) {
  for (const SourceDescriptor& d : kSources)
    if (d.type == source.type) return d;
  return kUnknown;
}

const SourceDescriptor& describe_source(SourceKind kind) {
  for (const SourceDescriptor& d : kSources)
    if (d.kind == kind) return d;
  return kUnknown;
}

int source_port(const DatabaseEndpoint& source) {
  return source.port > 0 ? static_cast<int>(source.port) : describe_source(source).default_port;
}

std::string rename_settings(std::string message, std::string_view settings) {
  if (settings == "source") return message;
  const std::string from = "source.";
  const std::string to = std::string(settings) + ".";
  size_t from_here = 0;
  for (size_t at; (at = message.find(from, from_here)) != std::string::npos;) {
    const char before = at == 0 ? ' ' : message[at - 1];
    if (std::isalnum(static_cast<unsigned char>(before)) || before == '_' || before == '.') {
      from_here = at + 1;  // part of another word ("datasource.")
      continue;
    }
    message.replace(at, from.size(), to);
    from_here = at + to.size();
  }
  return message;
}

}  // namespace tidemark
