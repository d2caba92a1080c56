#include "source/generator/generator_source.hpp"

#include <charconv>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

namespace tidemark {

namespace {
constexpr std::chrono::milliseconds kPushWait{100};
constexpr std::string_view kPositionPrefix = "seq:";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

GeneratorSource::GeneratorSource(const Config& config)
    : config_(config.source.generator), rate_per_second_(config.source.generator.rate_per_second) {
  for (int64_t t = 0; t < config_.tables; ++t) {
    auto schema = std::make_shared<TableSchema>();
    schema->id = TableId{"generator", "", "t" + std::to_string(t)};
    schema->columns = {"id", "version", "payload", "updated_at"};
    schema->key_columns = {0};
    tables_.push_back(std::move(schema));
  }
  payload_.reserve(static_cast<size_t>(config_.row_bytes));
  for (int64_t i = 0; i < config_.row_bytes; ++i) payload_ += static_cast<char>('a' + i % 26);
}

void GeneratorSource::reconfigure(const Config& config) {
  rate_per_second_ = config.source.generator.rate_per_second;
}

std::optional<uint64_t> GeneratorSource::parse_position(const SourcePosition& position) {
  const std::string& t = position.token;
  if (t.compare(0, kPositionPrefix.size(), kPositionPrefix) != 0) return std::nullopt;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(t.data() + kPositionPrefix.size(), t.data() + t.size(), n);
  if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  return n;
}

SourcePosition GeneratorSource::position_after(uint64_t n) {
  return SourcePosition{std::string(kPositionPrefix) + std::to_string(n + 1)};
}

Row GeneratorSource::row(uint64_t key, uint64_t version) const {
  Row r;
  r.reserve(4);
  r.emplace_back(static_cast<int64_t>(key));
  r.emplace_back(static_cast<int64_t>(version));
  r.emplace_back(payload_);
  r.emplace_back(TimestampTz{static_cast<int64_t>(version) * 1000});
  return r;
}

ChangeEvent GeneratorSource::event_at(uint64_t n) const {
  const auto tables = static_cast<uint64_t>(config_.tables);
  const auto keys = static_cast<uint64_t>(config_.keys);
  const uint64_t step = n / tables;  // how many events this table has seen before
  const uint64_t key = step % keys;
  const uint64_t round = step / keys;
  const uint64_t previous = n - tables * keys;  // the event that last touched this key
  ChangeEvent e;
  e.table = tables_[n % tables];
  e.source.connector = ConnectorKind::Generator;
  e.source.sequence = n;
  switch (round % 3) {
    case 0:
      e.op = Op::Create;
      e.after = row(key, n);
      break;
    case 1:
      e.op = Op::Update;
      e.before = row(key, previous);
      e.after = row(key, n);
      break;
    default:
      e.op = Op::Delete;
      e.before = row(key, previous);
      break;
  }
  return e;
}

SourceOutcome GeneratorSource::run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) {
  uint64_t n = 0;
  if (start) {
    const auto parsed = parse_position(*start);
    if (!parsed) return {false, "the stored position '" + start->token + "' is not a generator position"};
    n = *parsed;
  }
  set_connected(true);  // nothing to connect to: up while it runs
  struct Down {
    GeneratorSource& self;
    ~Down() { self.set_connected(false); }
  } down{*this};
  const auto total = static_cast<uint64_t>(config_.total_events);
  const auto tx_size = static_cast<uint64_t>(config_.transaction_size);
  spdlog::info("generator: starting at event {}", n);
  auto window_start = std::chrono::steady_clock::now();
  uint64_t sent_in_window = 0;
  while (!stop.stop_requested()) {
    if (total != 0 && n >= total) {
      std::this_thread::sleep_for(kPushWait);  // done: idle until stopped, like a quiet database
      continue;
    }
    if (const int64_t rate = rate_per_second_; rate > 0) {
      // Simple pacing: never more than `rate` events in any one-second window.
      const auto now = std::chrono::steady_clock::now();
      if (now - window_start >= std::chrono::seconds(1)) {
        window_start = now;
        sent_in_window = 0;
      }
      if (sent_in_window >= static_cast<uint64_t>(rate)) {
        std::this_thread::sleep_until(window_start + std::chrono::seconds(1));
        continue;
      }
      ++sent_in_window;
    }
    StreamItem item = event_at(n);
    auto& event = std::get<ChangeEvent>(item);
    event.source.commit_ts_ms = now_ms();
    const bool transaction_end = (n + 1) % tx_size == 0 || (total != 0 && n + 1 == total);
    if (transaction_end) event.resume_position = position_after(n);
    while (!out.push_for(item, kPushWait)) {
      if (stop.stop_requested()) return {};
    }
    ++n;
  }
  return {};
}

}  // namespace tidemark
