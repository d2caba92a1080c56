// PipelineMetrics' batched acknowledgements (one delivery poll's reports at once) give the same histogram,
// counters and backlog signal as the same acknowledgements counted one by one.

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/pipeline_metrics.hpp"

namespace tidemark {
namespace {

// The lines of the exposition that belong to `name` (its buckets and count; not its _sum, whose last digit
// depends on the order of the additions).
std::string series(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  while (std::getline(in, line))
    if (line.rfind(name, 0) == 0 && line.rfind(name + "_sum", 0) != 0) out += line + "\n";
  return out;
}

double value_of(const std::string& text, const std::string& name) {
  const auto at = text.find("\n" + name);
  if (at == std::string::npos) return -1;
  const auto end = text.find('\n', at + 1);
  const std::string line = text.substr(at + 1, end - at - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

TEST(PipelineMetrics, BatchedAcknowledgementsCountAsSingleOnes) {
  std::mt19937_64 rng(5);
  std::vector<double> latencies;
  for (int i = 0; i < 2000; ++i) latencies.push_back(static_cast<double>(rng() % 3'000'000) / 1e6);  // 0-3 s
  // Exactly on bucket boundaries too: Prometheus buckets are "less than or equal".
  for (const double b : {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 60.0, 61.0}) latencies.push_back(b);

  PipelineMetrics single("p");
  for (const double l : latencies) single.count_record_acknowledged(l);
  PipelineMetrics batched("p");
  for (size_t at = 0; at < latencies.size();) {
    const size_t n = std::min(latencies.size() - at, 1 + static_cast<size_t>(rng() % 300));
    batched.count_records_acknowledged(std::span<const double>(latencies.data() + at, n));
    at += n;
  }
  batched.count_records_acknowledged({});  // an empty poll counts nothing

  const std::string histogram = series(single.text(), "tidemark_delivery_latency_seconds");
  ASSERT_NE(histogram.find("le=\"0.001\""), std::string::npos) << histogram;
  EXPECT_EQ(series(batched.text(), "tidemark_delivery_latency_seconds"), histogram);
  double sum = 0;
  for (const double l : latencies) sum += l;
  EXPECT_NEAR(value_of(batched.text(), "tidemark_delivery_latency_seconds_sum"), sum, 1e-6);
  EXPECT_NEAR(value_of(single.text(), "tidemark_delivery_latency_seconds_sum"), sum, 1e-6);
  EXPECT_EQ(value_of(batched.text(), "tidemark_records_acknowledged_total"), static_cast<double>(latencies.size()));
  EXPECT_EQ(series(batched.text(), "tidemark_records_acknowledged_total"),
            series(single.text(), "tidemark_records_acknowledged_total"));

  const auto a = single.take_acknowledgements();
  const auto b = batched.take_acknowledgements();
  EXPECT_EQ(a.count, latencies.size());
  EXPECT_EQ(b.count, latencies.size());
  ASSERT_TRUE(b.max_latency);
  EXPECT_EQ(b.max_latency, a.max_latency);
  EXPECT_EQ(*b.max_latency, std::chrono::microseconds(61'000'000));
  EXPECT_EQ(batched.take_acknowledgements().count, 0u) << "taken";
}

}  // namespace
}  // namespace tidemark
