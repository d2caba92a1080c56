// libFuzzer target: pgoutput messages (decode_pgoutput) and the replication protocol's CopyData messages
// around them, on the same bytes. A decoded message must describe itself and survive encode_pgoutput
// unchanged (decode(encode(m)) == m: the writer is what tests and fake servers build messages with);
// Insert/Update/Delete are also checked against a relation of their shape.
// Decode errors are expected results.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>

#include "source/postgres/pgoutput_decoder.hpp"
#include "source/postgres/replication_messages.hpp"

using namespace tidemark::pg;

namespace {

// A relation with one column per value of the message's first tuple, the first one a key.
RelationMessage relation_for(const PgOutputMessage& message) {
  RelationMessage r;
  r.relation_name = "t";
  r.namespace_name = "public";
  const TupleData* tuple = nullptr;
  if (const auto* m = std::get_if<InsertMessage>(&message)) {
    r.relation_id = m->relation_id;
    tuple = &m->new_tuple;
  } else if (const auto* u = std::get_if<UpdateMessage>(&message)) {
    r.relation_id = u->relation_id;
    tuple = &u->new_tuple;
  } else if (const auto* d = std::get_if<DeleteMessage>(&message)) {
    r.relation_id = d->relation_id;
    tuple = &d->old_image();
  }
  if (tuple == nullptr) return r;
  for (size_t i = 0; i < tuple->size(); ++i) {
    r.columns.push_back(RelationColumn{static_cast<uint8_t>(i == 0 ? kColumnFlagKey : 0), "c" + std::to_string(i), 25, -1});
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto decoded = decode_pgoutput(bytes);
  if (auto* error = std::get_if<DecodeError>(&decoded)) {
    (void)error->to_string();
  } else {
    const PgOutputMessage& message = std::get<PgOutputMessage>(decoded);
    (void)describe(message);
    (void)check_against_relation(message, relation_for(message));
    const std::string encoded = encode_pgoutput(message);
    auto again = decode_pgoutput(encoded);
    const auto* round_trip = std::get_if<PgOutputMessage>(&again);
    if (round_trip == nullptr || !(*round_trip == message)) std::abort();  // the writer and reader disagree
  }
  auto replication = decode_replication_message(bytes);
  if (auto* error = std::get_if<DecodeError>(&replication)) (void)error->to_string();
  auto status = decode_standby_status_update(bytes);
  if (auto* error = std::get_if<DecodeError>(&status)) (void)error->to_string();
  if (auto lsn = parse_lsn(bytes)) {
    if (parse_lsn(lsn_to_string(*lsn)) != lsn) std::abort();  // pg_lsn text must read back
  }
  return 0;
}
