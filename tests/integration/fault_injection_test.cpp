// Fault injection through the dev broker (librdkafka's mock cluster): the broker goes down mid-stream.
// What the mock cannot prove (idempotent dedupe, durability) is proved against the real broker elsewhere;
// here duplicates are allowed and only loss, order and positions are checked.

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "daemon_runner.hpp"
#include "dev_broker_runner.hpp"
#include "generator_stream.hpp"
#include "kafka_client.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

std::string sink_yaml(const std::string& bootstrap, int delivery_timeout_ms) {
  return "sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + bootstrap +
         "\n    delivery_timeout_ms: " + std::to_string(delivery_timeout_ms) +
         "\n    flush_timeout_ms: 5000\n"
         "    properties:\n"
         // A small producer queue, so the outage turns into backpressure on the source.
         "      queue.buffering.max.messages: \"300\"\n"
         "      reconnect.backoff.max.ms: \"200\"\n";
}

TEST(FaultInjection, BrokerDownForSecondsThenBackLosesNothingAndPositionsWait) {
  GeneratorSettings settings{.tables = 1, .keys = 200, .total_events = 20000, .rate_per_second = 4000,
                             .transaction_size = 5};
  DaemonRunner daemon("", settings);
  DevBroker broker({generator_topic(daemon.name(), 0) + ":3"});
  daemon.write_config(sink_yaml(broker.bootstrap(), 120000));
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 2000; }, 30s)) << daemon.stderr_text();

  broker.command("down all");
  std::this_thread::sleep_for(1500ms);  // acknowledgements already on their way are in by now
  const int64_t during_outage = daemon.committed_sequence().value();
  std::this_thread::sleep_for(3000ms);
  // Nothing acknowledged while the broker is down, so the committed position must not move.
  EXPECT_EQ(daemon.committed_sequence().value(), during_outage);
  EXPECT_TRUE(daemon.process().running()) << "an outage shorter than delivery_timeout_ms is not an error";
  broker.command("up all");

  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) == settings.total_events; }, 90s))
      << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();

  const auto records = consume_generator_topics(broker.bootstrap(), daemon.name(), 1);
  const auto report = check_generator_stream(
      records, {.tables = 1, .keys = 200, .first_sequence = 0, .end_sequence = settings.total_events,
                .allow_duplicates = true});
  for (const auto& f : report.failures) ADD_FAILURE() << f;
  std::cout << "outage at committed seq " << during_outage << "; " << report.records << " records, "
            << report.duplicates << " duplicates (the mock does not deduplicate retries)\n";
}

TEST(FaultInjection, OutageLongerThanDeliveryTimeoutExitsNonZeroAndRestartCompletes) {
  GeneratorSettings settings{.tables = 1, .keys = 50, .total_events = 6000, .rate_per_second = 2000,
                             .transaction_size = 1};
  DaemonRunner daemon("", settings);
  DevBroker broker({generator_topic(daemon.name(), 0) + ":2"});
  daemon.write_config(sink_yaml(broker.bootstrap(), 2000));
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 500; }, 30s)) << daemon.stderr_text();
  broker.command("down all");
  const auto status = daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(status.has_value()) << "the daemon should give up after delivery_timeout_ms";
  EXPECT_EQ(*status, 2) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("within sink.kafka.delivery_timeout_ms"), std::string::npos)
      << daemon.stderr_text();
  const int64_t committed = daemon.committed_sequence().value();
  broker.command("up all");

  // Everything below the committed position is in Kafka: positions were never ahead of acknowledgements.
  auto records = consume_generator_topics(broker.bootstrap(), daemon.name(), 1);
  auto report = check_generator_stream(records, {.tables = 1, .keys = 50, .first_sequence = 0,
                                                 .end_sequence = committed, .allow_duplicates = true});
  for (const auto& f : report.failures) ADD_FAILURE() << f;

  // systemd would restart it; so do we: it resumes and completes.
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) == settings.total_events; }, 60s))
      << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
  records = consume_generator_topics(broker.bootstrap(), daemon.name(), 1);
  report = check_generator_stream(records, {.tables = 1, .keys = 50, .first_sequence = 0,
                                            .end_sequence = settings.total_events, .allow_duplicates = true});
  for (const auto& f : report.failures) ADD_FAILURE() << f;
}

}  // namespace
}  // namespace tidemark::test
