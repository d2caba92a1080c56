// libFuzzer target: signal rows (parse_signal), both Tidemark's and Debezium's data shapes. A parsed
// execute-snapshot's tables must read back the same through execute_snapshot_data, what `tidemark
// snapshot` writes for one table.
//
// Input: u8 type selector (0..3: the four signal types; otherwise a type text up to a NUL), then the data.
// Refused signals are expected results.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "snapshot/signal.hpp"

using namespace tidemark::snapshot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tidemark::fuzz::FuzzInput in(data, size);
  static const char* const kTypes[] = {"execute-snapshot", "stop-snapshot", "pause-snapshot", "resume-snapshot"};
  const uint8_t selector = in.u8();
  const std::string type = selector < 4 ? std::string(kTypes[selector]) : std::string(in.until('\0'));
  const std::string body(in.rest());
  const auto signal = parse_signal("fuzz-1", type, body);
  if (!signal.ok() || signal.value->kind != SignalKind::ExecuteSnapshot) return 0;
  for (const TableRequest& table : signal.value->tables) {
    const auto again = parse_signal("fuzz-1", "execute-snapshot", execute_snapshot_data(table));
    if (!again.ok() || again.value->tables.size() != 1 || !(again.value->tables[0] == table)) std::abort();
  }
  return 0;
}
