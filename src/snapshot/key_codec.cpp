#include "snapshot/key_codec.hpp"

#include <cstring>
#include <type_traits>

namespace tidemark::snapshot {

namespace {

template <typename T>
void put_raw(std::string& out, const T& v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

// Length-prefixed, so that ("ab","c") and ("a","bc") differ.
void put_text(std::string& out, const std::string& s) {
  put_raw(out, static_cast<uint64_t>(s.size()));
  out += s;
}

bool encode_value(const Value& value, std::string& out) {
  out.push_back(static_cast<char>(value.v.index()));
  return std::visit(
      [&out](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Unavailable>) {
          return false;
        } else if constexpr (std::is_same_v<T, Null>) {
          return true;
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                             std::is_same_v<T, double>) {
          put_raw(out, x);
          return true;
        } else if constexpr (std::is_same_v<T, std::string>) {
          put_text(out, x);
          return true;
        } else if constexpr (std::is_same_v<T, Decimal> || std::is_same_v<T, Json>) {
          put_text(out, x.text);
          return true;
        } else if constexpr (std::is_same_v<T, Bytes>) {
          put_text(out, x.data);
          return true;
        } else if constexpr (std::is_same_v<T, Date>) {
          put_raw(out, x.days);
          return true;
        } else if constexpr (std::is_same_v<T, Time> || std::is_same_v<T, Timestamp> || std::is_same_v<T, TimestampTz>) {
          put_raw(out, x.micros);
          return true;
        } else if constexpr (std::is_same_v<T, Interval>) {
          put_raw(out, x.months);
          put_raw(out, x.days);
          put_raw(out, x.micros);
          return true;
        } else if constexpr (std::is_same_v<T, Uuid>) {
          out.append(reinterpret_cast<const char*>(x.bytes.data()), x.bytes.size());
          return true;
        } else {
          static_assert(std::is_same_v<T, Array>);
          put_raw(out, static_cast<uint64_t>(x.items.size()));
          for (const auto& item : x.items)
            if (!encode_value(item, out)) return false;
          return true;
        }
      },
      value.v);
}

}  // namespace

bool encode_key(const Row& row, const std::vector<size_t>& columns, std::string& out) {
  for (const size_t c : columns) {
    if (c >= row.size() || !encode_value(row[c], out)) return false;
  }
  return true;
}

}  // namespace tidemark::snapshot
