// The CopyData framing of streaming replication: XLogData and keepalive decoding, the standby status
// update against bytes computed by hand from the protocol description, LSN text and epoch conversions.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "source/postgres/pgoutput_decoder.hpp"
#include "source/postgres/replication_messages.hpp"

namespace tidemark::pg {
namespace {

using namespace std::string_literals;

template <typename M>
M decode_ok(std::string_view bytes) {
  auto result = decode_replication_message(bytes);
  if (const auto* error = std::get_if<DecodeError>(&result)) {
    ADD_FAILURE() << error->to_string();
    return M{};
  }
  const auto& message = std::get<ReplicationMessage>(result);
  if (!std::holds_alternative<M>(message)) {
    ADD_FAILURE() << "other message type";
    return M{};
  }
  return std::get<M>(message);
}

DecodeError replication_decode_error(std::string_view bytes) {
  auto result = decode_replication_message(bytes);
  if (auto* error = std::get_if<DecodeError>(&result)) return *error;
  ADD_FAILURE() << "decoded without error";
  return {};
}

// ---- ByteCursor ---------------------------------------------------------------------------------------------

TEST(ByteCursor, ReadsNetworkByteOrder) {
  const std::string bytes = "\x01\x02\x03\x04\x05\x06\x07\x08\xFF\xFF\xFF\xFE" "ab\0rest"s;
  ByteCursor c(bytes);
  uint8_t u8 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  int32_t i32 = 0;
  std::string_view s;
  ASSERT_TRUE(c.read_u8(u8));
  EXPECT_EQ(u8, 0x01);
  ASSERT_TRUE(c.read_u16(u16));
  EXPECT_EQ(u16, 0x0203);
  ASSERT_TRUE(c.read_u32(u32));
  EXPECT_EQ(u32, 0x04050607u);
  EXPECT_EQ(c.offset(), 7u);
  EXPECT_EQ(c.peek_u8(), uint8_t{0x08});
  ASSERT_TRUE(c.read_u8(u8));
  ASSERT_TRUE(c.read_i32(i32));
  EXPECT_EQ(i32, -2);
  ASSERT_TRUE(c.read_cstring(s));
  EXPECT_EQ(s, "ab");
  EXPECT_EQ(c.remaining(), 4u);
  ASSERT_TRUE(c.read_bytes(2, s));
  EXPECT_EQ(s, "re");
  EXPECT_EQ(c.read_rest(), "st");
  EXPECT_TRUE(c.at_end());
  EXPECT_FALSE(c.failed());
  EXPECT_EQ(c.peek_u8(), std::nullopt);

  const std::string wide_bytes = "\x80\x00\x00\x00\x00\x00\x00\x01\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF"s;
  ByteCursor wide(wide_bytes);
  uint64_t u64 = 0;
  int64_t i64 = 0;
  ASSERT_TRUE(wide.read_u64(u64));
  EXPECT_EQ(u64, 0x8000000000000001u);
  ASSERT_TRUE(wide.read_i64(i64));
  EXPECT_EQ(i64, -1);
}

TEST(ByteCursor, FirstFailureIsKeptAndSticky) {
  const std::string bytes = "\x00\x01\x02"s;
  ByteCursor c(bytes);
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  ASSERT_TRUE(c.read_u16(u16));
  EXPECT_FALSE(c.read_u32(u32, "relation id"));
  ASSERT_TRUE(c.failed());
  EXPECT_EQ(c.failure()->offset, 2u);
  EXPECT_EQ(c.failure()->message, "truncated relation id: needs 4 bytes, 1 left");
  EXPECT_EQ(c.offset(), 2u);  // nothing consumed by the failed read
  uint8_t u8 = 0;
  EXPECT_FALSE(c.read_u8(u8));  // the byte is there, but the cursor has failed
  c.fail(0, "later problem");
  c.prefix_failure("Insert: ");
  EXPECT_EQ(c.failure()->message, "Insert: truncated relation id: needs 4 bytes, 1 left");
  EXPECT_EQ(c.failure()->offset, 2u);
}

TEST(ByteCursor, StringsNeedTheirNul) {
  static_assert(!std::is_constructible_v<ByteCursor, std::string&&>);
  ByteCursor c("abc");
  std::string_view s;
  EXPECT_FALSE(c.read_cstring(s, "prefix"));
  EXPECT_EQ(c.failure()->message, "unterminated prefix: no NUL in the 3 remaining bytes");
  ByteCursor empty{std::string_view()};  // null data pointer
  EXPECT_FALSE(empty.read_cstring(s));
  EXPECT_EQ(empty.failure()->offset, 0u);
  ByteCursor huge("ab");
  EXPECT_FALSE(huge.read_bytes(std::numeric_limits<size_t>::max(), s));
  EXPECT_EQ(huge.failure()->message, "truncated bytes: needs 18446744073709551615 bytes, 2 left");
}

// ---- standby status update ('r') ------------------------------------------------------------------------

// 'r', write 16/B374D848, flush 16/B374D800, apply 0/0, sendTime 849522651644887 µs
// (2026-12-02T10:30:51.644887Z), replyRequested 1: 34 bytes, big-endian.
const std::string kStatusUpdateBytes =
    "r"
    "\x00\x00\x00\x16\xB3\x74\xD8\x48"
    "\x00\x00\x00\x16\xB3\x74\xD8\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x03\x04\xA2\xE7\xE1\x43\xD7"
    "\x01"s;

const StandbyStatusUpdate kStatusUpdate{0x16B374D848, 0x16B374D800, 0, 849522651644887, true};

TEST(StandbyStatusUpdate, EncodesToHandComputedBytes) {
  ASSERT_EQ(kStatusUpdateBytes.size(), kStandbyStatusUpdateSize);
  EXPECT_EQ(encode_standby_status_update(kStatusUpdate), kStatusUpdateBytes);
  StandbyStatusUpdate quiet = kStatusUpdate;
  quiet.reply_requested = false;
  std::string expected = kStatusUpdateBytes;
  expected.back() = '\0';
  EXPECT_EQ(encode_standby_status_update(quiet), expected);
}

TEST(StandbyStatusUpdate, DecodesBack) {
  auto result = decode_standby_status_update(kStatusUpdateBytes);
  ASSERT_TRUE(std::holds_alternative<StandbyStatusUpdate>(result)) << std::get<DecodeError>(result).to_string();
  EXPECT_EQ(std::get<StandbyStatusUpdate>(result), kStatusUpdate);

  const StandbyStatusUpdate extremes{std::numeric_limits<Lsn>::max(), 1, 0, std::numeric_limits<int64_t>::min(),
                                     false};
  auto back = decode_standby_status_update(encode_standby_status_update(extremes));
  ASSERT_TRUE(std::holds_alternative<StandbyStatusUpdate>(back));
  EXPECT_EQ(std::get<StandbyStatusUpdate>(back), extremes);
}

TEST(StandbyStatusUpdate, RejectsMalformedBytes) {
  for (size_t length = 0; length < kStatusUpdateBytes.size(); ++length) {
    auto result = decode_standby_status_update(std::string_view(kStatusUpdateBytes).substr(0, length));
    ASSERT_TRUE(std::holds_alternative<DecodeError>(result)) << length;
    EXPECT_LE(std::get<DecodeError>(result).offset, length);
  }
  auto trailing = decode_standby_status_update(kStatusUpdateBytes + "x");
  ASSERT_TRUE(std::holds_alternative<DecodeError>(trailing));
  EXPECT_EQ(std::get<DecodeError>(trailing).offset, 34u);
  EXPECT_EQ(std::get<DecodeError>(trailing).message,
            "standby status update: 1 trailing bytes after the last field");

  std::string bad_reply = kStatusUpdateBytes;
  bad_reply.back() = '\x02';
  auto reply = decode_standby_status_update(bad_reply);
  ASSERT_TRUE(std::holds_alternative<DecodeError>(reply));
  EXPECT_EQ(std::get<DecodeError>(reply).offset, 33u);

  auto other = decode_standby_status_update("h"s + std::string(33, '\0'));
  ASSERT_TRUE(std::holds_alternative<DecodeError>(other));
  EXPECT_EQ(std::get<DecodeError>(other).kind, 'h');
}

// ---- XLogData ('w') ---------------------------------------------------------------------------------------

TEST(XLogData, DecodesAHandBuiltMessage) {
  const std::string bytes =
      "w"
      "\x00\x00\x00\x00\x01\xDF\x36\x88"    // dataStart 0/1DF3688
      "\x00\x00\x00\x00\x01\xDF\x36\xB8"    // walEnd 0/1DF36B8
      "\x00\x03\x04\xA2\xE7\xE1\x43\xD7"    // sendTime
      "C\x00\x00\x00\x00\x00\x01\xDF\x36\x88\x00\x00\x00\x00\x01\xDF\x36\xB8\x00\x03\x04\xA2\xE7\xE1\x43\xD7"s;
  const auto m = decode_ok<XLogData>(bytes);
  EXPECT_EQ(m.wal_start, 0x1DF3688u);
  EXPECT_EQ(m.wal_end, 0x1DF36B8u);
  EXPECT_EQ(m.server_time_us, 849522651644887);
  EXPECT_EQ(m.payload.size(), bytes.size() - kXLogDataHeaderSize);
  EXPECT_EQ(m.payload.data(), bytes.data() + kXLogDataHeaderSize);  // a view, not a copy

  // The payload is a pgoutput Commit (captured, see pgoutput_decoder_test.cpp).
  auto inner = decode_pgoutput(m.payload);
  ASSERT_TRUE(std::holds_alternative<PgOutputMessage>(inner));
  const auto& commit = std::get<CommitMessage>(std::get<PgOutputMessage>(inner));
  EXPECT_EQ(commit.commit_lsn, 0x1DF3688u);
  EXPECT_EQ(commit.end_lsn, 0x1DF36B8u);
}

TEST(XLogData, EncodeDecodeRoundTrip) {
  const std::string payload = "M\x01\x00\x00\x00\x00\x01\xDF\x66\xB0tidemark\x00\x00\x00\x00\x07" "content"s;
  const std::string bytes = encode_xlog_data(0x16B374D848, 0x16B374D900, -5, payload);
  ASSERT_EQ(bytes.size(), kXLogDataHeaderSize + payload.size());
  EXPECT_EQ(bytes.substr(0, 9), "w\x00\x00\x00\x16\xB3\x74\xD8\x48"s);
  const auto m = decode_ok<XLogData>(bytes);
  EXPECT_EQ(m.wal_start, 0x16B374D848u);
  EXPECT_EQ(m.wal_end, 0x16B374D900u);
  EXPECT_EQ(m.server_time_us, -5);
  EXPECT_EQ(m.payload, payload);
}

TEST(XLogData, RejectsShortHeadersAndEmptyPayloads) {
  const std::string bytes = encode_xlog_data(1, 2, 3, "B");
  for (size_t length = 1; length < bytes.size(); ++length) {
    const DecodeError error = replication_decode_error(std::string_view(bytes).substr(0, length));
    EXPECT_EQ(error.kind, 'w');
    EXPECT_LE(error.offset, length);
  }
  EXPECT_EQ(replication_decode_error(bytes.substr(0, 20)).message, "XLogData header: truncated sendTime: needs 8 bytes, 3 left");
  EXPECT_EQ(replication_decode_error(bytes.substr(0, 20)).offset, 17u);
  const DecodeError empty = replication_decode_error(bytes.substr(0, kXLogDataHeaderSize));
  EXPECT_EQ(empty.offset, kXLogDataHeaderSize);
  EXPECT_EQ(empty.message, "XLogData without payload");
}

// ---- primary keepalive ('k') -----------------------------------------------------------------------------

TEST(PrimaryKeepalive, DecodesHandBuiltMessages) {
  const std::string asks =
      "k"
      "\x00\x00\x00\x16\xB3\x74\xD8\x48"
      "\x00\x03\x04\xA2\xE7\xE1\x43\xD7"
      "\x01"s;
  ASSERT_EQ(asks.size(), kPrimaryKeepaliveSize);
  const auto m = decode_ok<PrimaryKeepalive>(asks);
  EXPECT_EQ(m.wal_end, 0x16B374D848u);
  EXPECT_EQ(m.server_time_us, 849522651644887);
  EXPECT_TRUE(m.reply_requested);

  std::string quiet = asks;
  quiet.back() = '\0';
  EXPECT_FALSE(decode_ok<PrimaryKeepalive>(quiet).reply_requested);
  EXPECT_EQ(encode_primary_keepalive(m), asks);
  EXPECT_EQ(encode_primary_keepalive(PrimaryKeepalive{0x16B374D848, 849522651644887, false}), quiet);
}

TEST(PrimaryKeepalive, RejectsMalformedBytes) {
  const std::string bytes = encode_primary_keepalive(PrimaryKeepalive{7, 8, true});
  for (size_t length = 1; length < bytes.size(); ++length) {
    const DecodeError error = replication_decode_error(std::string_view(bytes).substr(0, length));
    EXPECT_EQ(error.kind, 'k');
    EXPECT_LE(error.offset, length);
  }
  const DecodeError trailing = replication_decode_error(bytes + "\x00"s);
  EXPECT_EQ(trailing.offset, kPrimaryKeepaliveSize);
  EXPECT_EQ(trailing.message, "primary keepalive: 1 trailing bytes after the last field");

  std::string bad = bytes;
  bad.back() = '\x07';
  const DecodeError reply = replication_decode_error(bad);
  EXPECT_EQ(reply.offset, 17u);
  EXPECT_EQ(reply.message, "primary keepalive: replyRequested is 7, expected 0 or 1");
}

TEST(ReplicationMessage, UnknownAndEmptyMessages) {
  const DecodeError empty = replication_decode_error("");
  EXPECT_EQ(empty.kind, '\0');
  EXPECT_EQ(empty.offset, 0u);
  const DecodeError unknown = replication_decode_error("r"s + std::string(33, '\0'));  // our own message type, not the server's
  EXPECT_EQ(unknown.kind, 'r');
  EXPECT_EQ(unknown.offset, 0u);
  EXPECT_EQ(unknown.to_string(),
            "message 'r' (0x72) at byte offset 0: unknown streaming replication message type (expected 'w' XLogData "
            "or 'k' keepalive)");
}

TEST(ReplicationMessage, RandomBytesNeverCrash) {
  std::mt19937_64 rng(7);
  std::string bytes;
  for (int i = 0; i < 100'000; ++i) {
    bytes.resize(rng() % 40);
    for (char& ch : bytes) ch = static_cast<char>(rng());
    if (!bytes.empty() && rng() % 4 != 0) bytes[0] = "wkr"[rng() % 3];
    auto result = decode_replication_message(bytes);
    if (const auto* error = std::get_if<DecodeError>(&result)) {
      ASSERT_LE(error->offset, bytes.size());
    } else if (const auto* data = std::get_if<XLogData>(&std::get<ReplicationMessage>(result))) {
      ASSERT_EQ(encode_xlog_data(data->wal_start, data->wal_end, data->server_time_us, data->payload), bytes);
    } else {
      ASSERT_EQ(encode_primary_keepalive(std::get<PrimaryKeepalive>(std::get<ReplicationMessage>(result))), bytes);
    }
    auto status = decode_standby_status_update(bytes);
    if (const auto* update = std::get_if<StandbyStatusUpdate>(&status)) {
      ASSERT_EQ(encode_standby_status_update(*update), bytes);
    } else {
      ASSERT_LE(std::get<DecodeError>(status).offset, bytes.size());
    }
  }
}

// ---- LSN text -------------------------------------------------------------------------------------------

TEST(Lsn, TextRoundTrip) {
  EXPECT_EQ(lsn_to_string(0x16B374D848), "16/B374D848");
  EXPECT_EQ(parse_lsn("16/B374D848"), Lsn{0x16B374D848});
  EXPECT_EQ(parse_lsn("16/b374d848"), Lsn{0x16B374D848});
  EXPECT_EQ(lsn_to_string(0), "0/0");
  EXPECT_EQ(parse_lsn("0/0"), Lsn{0});
  EXPECT_EQ(lsn_to_string(0x1DF3688), "0/1DF3688");
  EXPECT_EQ(lsn_to_string(std::numeric_limits<Lsn>::max()), "FFFFFFFF/FFFFFFFF");
  EXPECT_EQ(parse_lsn("FFFFFFFF/FFFFFFFF"), std::numeric_limits<Lsn>::max());
  EXPECT_EQ(parse_lsn("00000001/00000002"), Lsn{0x100000002});  // leading zeros, 8 digits each

  std::mt19937_64 rng(1);
  for (int i = 0; i < 10'000; ++i) {
    const Lsn lsn = rng() >> (rng() % 64);
    ASSERT_EQ(parse_lsn(lsn_to_string(lsn)), lsn) << lsn_to_string(lsn);
  }
}

TEST(Lsn, RejectsWhatPgLsnRejects) {
  for (const char* text : {"", "/", "1/", "/1", "1", "123456789/0", "0/123456789", "1/2/3", "g/0", "0/g", " 1/0",
                           "1/0 ", "1 /0", "-1/0", "+1/0", "0x1/0", "1/0\n"}) {
    EXPECT_EQ(parse_lsn(text), std::nullopt) << '"' << text << '"';
  }
  EXPECT_EQ(parse_lsn(std::string_view("1/0\0", 4)), std::nullopt);
}

// ---- epochs ---------------------------------------------------------------------------------------------

TEST(Epoch, UnixAndPostgresMicroseconds) {
  static_assert(unix_us_to_pg_us(946'684'800'000'000) == 0);
  static_assert(pg_us_to_unix_us(0) == 946'684'800'000'000);
  static_assert(unix_us_to_pg_us(0) == -946'684'800'000'000);
  // 2026-12-02T10:30:51.644887Z, the commit time of the first captured transaction.
  EXPECT_EQ(pg_us_to_unix_us(849522651644887), 1'796'207'451'644'887);
  EXPECT_EQ(unix_us_to_pg_us(1'796'207'451'644'887), 849522651644887);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{123456789012345}, int64_t{-123456789012345}}) {
    EXPECT_EQ(pg_us_to_unix_us(unix_us_to_pg_us(v)), v);
  }
  // Saturation instead of overflow; PostgreSQL's ±infinity stay put.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(pg_us_to_unix_us(kMax), kMax);
  EXPECT_EQ(pg_us_to_unix_us(kMin), kMin);
  EXPECT_EQ(unix_us_to_pg_us(kMax), kMax);
  EXPECT_EQ(unix_us_to_pg_us(kMin), kMin);
  EXPECT_EQ(pg_us_to_unix_us(kMax - 1), kMax);
  EXPECT_EQ(unix_us_to_pg_us(kMin + 1), kMin);
  EXPECT_EQ(pg_us_to_unix_us(kMax - kPostgresEpochUnixMicros), kMax);
  EXPECT_EQ(unix_us_to_pg_us(kMin + kPostgresEpochUnixMicros), kMin);
}

TEST(Epoch, NowIsPlausible) {
  const int64_t now = pg_now_us();
  EXPECT_GT(now, 849522651644887 - 86'400'000'000LL * 365);  // sanity: a clock in this decade
  EXPECT_LT(now, int64_t{4'000'000'000} * 1'000'000);
}

}  // namespace
}  // namespace tidemark::pg
