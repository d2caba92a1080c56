// libFuzzer target: PostgreSQL's text output forms (parse_pg_text) for every built-in type and its array,
// and for run-time types as the source registers them: an enum, domains (over a built-in type, over a
// domain, and a cycle that only the depth bound stops), arrays of those, a composite.
//
// Input: u8 type selector (mod the number of types below), u16 typmod, the value text (the rest).
// Parse errors are expected results.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.hpp"
#include "source/postgres/pg_value_parser.hpp"

using namespace tidemark::pg;

namespace {

constexpr uint32_t kEnum = 90001, kDomainInt4 = 90002, kDomainOfDomain = 90003, kEnumArray = 90004,
                   kDomainArray = 90005, kComposite = 90006, kCycleA = 90007, kCycleB = 90008,
                   kDomainOverArray = 90009;

const PgTypeRegistry& registry() {
  static const PgTypeRegistry types = [] {
    PgTypeRegistry r;
    r.add({kEnum, 'E', 0, 0, "mood", {}});
    r.add({kDomainInt4, 'N', 0, oid::kInt4, "positive", {}});
    r.add({kDomainOfDomain, 'N', 0, kDomainInt4, "small_positive", {}});
    r.add({kEnumArray, 'A', kEnum, 0, "_mood", {}});
    r.add({kDomainArray, 'A', kDomainOfDomain, 0, "_small_positive", {}});
    r.add({kComposite, 'C', 0, 0, "pair", {}});
    r.add({kCycleA, 'N', 0, kCycleB, "cycle_a", {}});
    r.add({kCycleB, 'N', 0, kCycleA, "cycle_b", {}});
    r.add({kDomainOverArray, 'A', 0, oid::kNumericArray, "numbers", {}});
    return r;
  }();
  return types;
}

constexpr uint32_t kTypes[] = {
    oid::kBool, oid::kBytea, oid::kChar, oid::kName, oid::kInt8, oid::kInt2, oid::kInt4, oid::kText, oid::kOid,
    oid::kJson, oid::kXml, oid::kCidr, oid::kFloat4, oid::kFloat8, oid::kMacaddr8, oid::kMoney, oid::kMacaddr,
    oid::kInet, oid::kBpchar, oid::kVarchar, oid::kDate, oid::kTime, oid::kTimestamp, oid::kTimestampTz,
    oid::kInterval, oid::kTimeTz, oid::kBit, oid::kVarbit, oid::kNumeric, oid::kUuid, oid::kJsonb,
    oid::kBoolArray, oid::kByteaArray, oid::kCharArray, oid::kNameArray, oid::kInt8Array, oid::kInt2Array,
    oid::kInt4Array, oid::kTextArray, oid::kOidArray, oid::kJsonArray, oid::kXmlArray, oid::kCidrArray,
    oid::kFloat4Array, oid::kFloat8Array, oid::kMacaddr8Array, oid::kMoneyArray, oid::kMacaddrArray,
    oid::kInetArray, oid::kBpcharArray, oid::kVarcharArray, oid::kDateArray, oid::kTimeArray,
    oid::kTimestampArray, oid::kTimestampTzArray, oid::kIntervalArray, oid::kTimeTzArray, oid::kBitArray,
    oid::kVarbitArray, oid::kNumericArray, oid::kUuidArray, oid::kJsonbArray,
    kEnum, kDomainInt4, kDomainOfDomain, kEnumArray, kDomainArray, kComposite, kCycleA, kCycleB, kDomainOverArray,
    12345,  // unknown: the text as is
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tidemark::fuzz::FuzzInput in(data, size);
  const uint32_t type = kTypes[in.u8() % (sizeof kTypes / sizeof kTypes[0])];
  const auto typmod = static_cast<int32_t>(static_cast<int16_t>(in.u16()));
  const PgParseResult result = parse_pg_text(type, typmod, in.rest(), registry());
  if (!result) (void)result.error().to_string();
  return 0;
}
