#pragma once
// Synthetic changes for the demo, benchmarks and pipeline tests. Deterministic: event number n touches
// table n % tables, key (n / tables) % keys, and each key cycles insert, update, delete; every row carries
// `version` = n, so a consumer can check per-key order. Position "seq:<next n>" at each transaction end.

#include <atomic>

#include "source/source.hpp"

namespace tidemark {

class GeneratorSource final : public Source {
 public:
  explicit GeneratorSource(const Config& config);

  std::vector<std::string> check() override { return {}; }
  SourceOutcome run(const std::optional<SourcePosition>& start, EventQueue& out, std::stop_token stop) override;
  void reconfigure(const Config& config) override;

  // The event with sequence number `n` (exposed for tests that check what reached Kafka).
  ChangeEvent event_at(uint64_t n) const;

  static std::optional<uint64_t> parse_position(const SourcePosition& position);
  static SourcePosition position_after(uint64_t n);

 private:
  Row row(uint64_t key, uint64_t version) const;

  GeneratorSourceConfig config_;
  std::vector<TableSchemaPtr> tables_;
  std::string payload_;
  std::atomic<int64_t> rate_per_second_;
};

}  // namespace tidemark
