#include "source/postgres/pg_type_catalog.hpp"

#include <string>

namespace tidemark::pg {

namespace {

void register_type(Connection& catalog, PgTypeRegistry& types, uint32_t oid, int depth) {
  if (depth > 8 || types.find(oid)) return;
  const auto r = catalog.query("SELECT typcategory, typelem, typbasetype, typname FROM pg_type WHERE oid = $1::oid",
                               {std::to_string(oid)});
  if (!r || PQntuples(r->get()) != 1) return;
  PgTypeInfo info;
  info.oid = oid;
  info.category = PQgetvalue(r->get(), 0, 0)[0];
  info.element_oid = oid_from_text(PQgetvalue(r->get(), 0, 1));
  info.base_oid = oid_from_text(PQgetvalue(r->get(), 0, 2));
  info.name = PQgetvalue(r->get(), 0, 3);
  if (info.category != 'A') info.element_oid = 0;
  if (info.category == 'E') {
    const auto labels = catalog.query("SELECT enumlabel FROM pg_enum WHERE enumtypid = $1::oid ORDER BY enumsortorder",
                                      {std::to_string(oid)});
    if (labels)
      for (int i = 0; i < PQntuples(labels->get()); ++i) info.labels.emplace_back(PQgetvalue(labels->get(), i, 0));
  }
  const uint32_t element = info.element_oid;
  const uint32_t base = info.base_oid;
  types.add(std::move(info));
  if (element) register_type(catalog, types, element, depth + 1);
  if (base) register_type(catalog, types, base, depth + 1);
}

}  // namespace

void register_catalog_type(Connection& catalog, PgTypeRegistry& types, uint32_t oid) {
  register_type(catalog, types, oid, 0);
}

}  // namespace tidemark::pg
