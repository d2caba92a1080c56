// End-to-end: the real tidemark binary, the real Kafka broker, and the tests' own consumer.

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "daemon_runner.hpp"
#include "generator_stream.hpp"
#include "kafka_client.hpp"

namespace tidemark::test {
namespace {

using namespace std::chrono_literals;

void create_generator_topics(const std::string& bootstrap, const std::string& prefix, int tables, int partitions) {
  for (int t = 0; t < tables; ++t) create_topic(bootstrap, generator_topic(prefix, t), partitions);
}

void expect_clean(const GeneratorStreamReport& report) {
  for (const auto& f : report.failures) ADD_FAILURE() << f;
}

// The names of a process's threads, as top -H shows them.
std::set<std::string> thread_names(pid_t pid) {
  std::set<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::string name = read_file((task.path() / "comm").string());
    while (!name.empty() && name.back() == '\n') name.pop_back();
    names.insert(name);
  }
  return names;
}

TEST(Daemon, SigtermFlushesEverythingAndRestartResumesWithoutDuplicates) {
  const std::string bootstrap = real_kafka_bootstrap();
  DaemonRunner daemon(bootstrap, GeneratorSettings{.tables = 2, .keys = 300, .total_events = 0,
                                                   .rate_per_second = 20000, .transaction_size = 1});
  create_generator_topics(bootstrap, daemon.name(), 2, 3);
  daemon.write_config();
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 5000; }, 30s)) << daemon.stderr_text();
  const std::set<std::string> threads = thread_names(daemon.process().pid());
  for (const char* name : {"tm-source", "tm-publish", "tm-lag-probe"})
    EXPECT_TRUE(threads.count(name)) << "no thread named " << name;

  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
  const int64_t stopped_at = daemon.committed_sequence().value();
  // Everything the source produced before the stop was flushed, and the position says exactly how far.
  auto records = consume_generator_topics(bootstrap, daemon.name(), 2);
  auto report = check_generator_stream(records, {.tables = 2, .keys = 300, .first_sequence = 0,
                                                 .end_sequence = stopped_at});
  expect_clean(report);
  EXPECT_EQ(report.max_sequence, stopped_at - 1) << "records beyond the committed position were sent";

  // Restart with a bounded total: it resumes at the committed position.
  const int64_t total = stopped_at + 3000;
  daemon.generator().total_events = total;
  daemon.generator().rate_per_second = 0;
  daemon.write_config();
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) == total; }, 30s)) << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("resuming after seq:" + std::to_string(stopped_at)), std::string::npos);

  records = consume_generator_topics(bootstrap, daemon.name(), 2);
  report = check_generator_stream(records, {.tables = 2, .keys = 300, .first_sequence = 0, .end_sequence = total});
  expect_clean(report);
  EXPECT_EQ(report.duplicates, 0u);
}

TEST(Daemon, KillNineMidStreamLosesNothingAndKeepsPerKeyOrder) {
  const std::string bootstrap = real_kafka_bootstrap();
  const int64_t total = 100000;
  DaemonRunner daemon(bootstrap, GeneratorSettings{.tables = 3, .keys = 1000, .total_events = total,
                                                   .rate_per_second = 40000, .transaction_size = 7});
  create_generator_topics(bootstrap, daemon.name(), 3, 4);
  daemon.write_config();
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 30000; }, 60s)) << daemon.stderr_text();
  daemon.stop(SIGKILL);
  const int64_t killed_at = daemon.committed_sequence().value();
  ASSERT_LT(killed_at, total) << "the kill came too late to test anything";

  daemon.generator().rate_per_second = 0;
  daemon.write_config();
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) == total; }, 60s)) << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();

  const auto records = consume_generator_topics(bootstrap, daemon.name(), 3);
  const auto report = check_generator_stream(
      records, {.tables = 3, .keys = 1000, .first_sequence = 0, .end_sequence = total, .allow_duplicates = true});
  expect_clean(report);
  // The committed position is a transaction end (multiple of 7 here), never inside a transaction.
  EXPECT_EQ(killed_at % 7, 0);
  std::cout << "kill -9 at committed seq " << killed_at << ": " << report.records << " records, "
            << report.duplicates << " replayed duplicates\n";
}

TEST(Daemon, UnreachableBrokerIsOneClearStartupError) {
  DaemonRunner daemon("127.0.0.1:1", GeneratorSettings{});
  daemon.write_config("sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: 127.0.0.1:1\n    connect_timeout_ms: 1500\n");
  daemon.start();
  const auto status = daemon.process().wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 1);
  EXPECT_NE(daemon.stderr_text().find("cannot reach Kafka at 127.0.0.1:1"), std::string::npos) << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("sink.kafka.bootstrap_servers"), std::string::npos);

  daemon.start("check");
  EXPECT_EQ(daemon.process().wait_for_exit(30s), 1);
  EXPECT_NE(daemon.stdout_text().find("problem: cannot reach Kafka"), std::string::npos) << daemon.stdout_text();
}

TEST(Daemon, UnknownTopicWithAutoCreateOffIsFatalWithTheFix) {
  const std::string bootstrap = real_kafka_bootstrap();
  DaemonRunner daemon(bootstrap, GeneratorSettings{.total_events = 10});
  daemon.write_config();  // no topic created; the test broker has auto.create.topics.enable=false
  daemon.start();
  const auto status = daemon.process().wait_for_exit(60s);
  ASSERT_TRUE(status.has_value()) << daemon.stderr_text();
  EXPECT_EQ(*status, 2);
  const std::string err = daemon.stderr_text();
  EXPECT_NE(err.find("topic " + generator_topic(daemon.name(), 0) + " does not exist"), std::string::npos) << err;
  EXPECT_NE(err.find("kafka-topics.sh"), std::string::npos) << err;
  EXPECT_NE(err.find("(the brokers have auto.create.topics.enable=false)"), std::string::npos) << err;
  EXPECT_EQ(err.find("waiting up to"), std::string::npos) << "a broker that does not create topics is not waited for";
  EXPECT_FALSE(daemon.committed_sequence().has_value()) << "nothing was acknowledged, nothing may be committed";
}

TEST(Daemon, CheckListsEveryConfigErrorWithItsLine) {
  TempDir dir;
  write_file(dir.file("bad.yaml"),
             "name: bad name\n"               // line 1: invalid characters
             "source:\n"
             "  type: generatr\n"             // line 3: bad choice
             "  generator:\n"
             "    keys: many\n"               // line 5: not an integer
             "sink:\n"
             "  kafka:\n"
             "    bootstrap_server: x:9092\n"  // line 8: unknown key (typo)
  );
  ChildProcess check({TIDEMARK_BINARY, "check", "--config", dir.file("bad.yaml")}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(check.wait_for_exit(30s), 1);
  const std::string err = read_file(dir.file("err"));
  EXPECT_NE(err.find("bad.yaml:1:7: name:"), std::string::npos) << err;
  EXPECT_NE(err.find("bad.yaml:3:9: source.type: 'generatr' is not one of"), std::string::npos) << err;
  EXPECT_NE(err.find("bad.yaml:5:11: source.generator.keys: expected an integer"), std::string::npos) << err;
  EXPECT_NE(err.find("bad.yaml:8:5: sink.kafka.bootstrap_server: unknown key (did you mean sink.kafka.bootstrap_servers?)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("sink.kafka.bootstrap_servers: required when sink.type is kafka"), std::string::npos) << err;
}

TEST(Daemon, SighupAppliesLiveSettingsAndNamesTheOnesThatNeedARestart) {
  const std::string bootstrap = real_kafka_bootstrap();
  DaemonRunner daemon(bootstrap, GeneratorSettings{.total_events = 0, .rate_per_second = 100});
  create_generator_topics(bootstrap, daemon.name(), 1, 1);
  daemon.write_config();
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) > 50; }, 30s)) << daemon.stderr_text();

  daemon.generator().rate_per_second = 2000;
  daemon.write_config("sink:\n  type: kafka\n  kafka:\n    bootstrap_servers: " + bootstrap +
                          "\n    tombstones_on_delete: false\n",
                      "debug");
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return daemon.stderr_text().find("SIGHUP: sink.kafka.tombstones_on_delete changed") != std::string::npos; }, 10s))
      << daemon.stderr_text();
  const std::string err = daemon.stderr_text();
  EXPECT_NE(err.find("SIGHUP: source.generator.rate_per_second changed to 2000"), std::string::npos) << err;
  EXPECT_NE(err.find("SIGHUP: log.level changed to debug"), std::string::npos) << err;
  EXPECT_NE(err.find("tombstones_on_delete changed, which needs a restart"), std::string::npos) << err;
  // The new rate is in force: at 100/s a second adds about 100, at 2000/s far more.
  const int64_t before = daemon.committed_sequence().value();
  std::this_thread::sleep_for(1500ms);
  EXPECT_GT(daemon.committed_sequence().value() - before, 1000);

  // A broken config on SIGHUP keeps the running one.
  write_file(daemon.config_path(), "name: [\n");
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return daemon.stderr_text().find("keeping the running one") != std::string::npos; }, 10s));
  EXPECT_TRUE(daemon.process().running());
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.stderr_text();
}

TEST(Daemon, FullDiskForTheStateFileIsReportedAndLosesNothing) {
  const std::string bootstrap = real_kafka_bootstrap();
  TempDir mount_point;
  const std::string mount = "mount -t tmpfs -o size=12k tmpfs " + mount_point.path() + " 2>/dev/null";
  if (std::system(mount.c_str()) != 0) GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
  struct Unmount {
    std::string path;
    ~Unmount() { std::system(("umount " + path).c_str()); }
  } unmount{mount_point.path()};

  DaemonRunner daemon(bootstrap, GeneratorSettings{.total_events = 0, .rate_per_second = 500});
  create_generator_topics(bootstrap, daemon.name(), 1, 1);
  const std::string state = mount_point.path() + "/state.json";
  daemon.write_config();
  std::string cfg = read_file(daemon.config_path());
  cfg.replace(cfg.find(daemon.state_path()), daemon.state_path().size(), state);
  write_file(daemon.config_path(), cfg);
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return !read_file(state).empty(); }, 30s)) << daemon.stderr_text();
  // Fill the filesystem: the next save cannot write its temporary file.
  std::system(("dd if=/dev/zero of=" + mount_point.path() + "/filler bs=1k count=64 2>/dev/null").c_str());
  const std::string last_good = read_file(state);
  ASSERT_TRUE(wait_until([&] { return daemon.stderr_text().find("No space left on device") != std::string::npos; }, 10s))
      << daemon.stderr_text();
  EXPECT_NE(daemon.stderr_text().find("Free space on that filesystem"), std::string::npos);
  EXPECT_EQ(read_file(state), last_good) << "the previous state file must stay intact";
  EXPECT_TRUE(daemon.process().running());

  // Space comes back: the position moves again.
  std::system(("rm -f " + mount_point.path() + "/filler").c_str());
  ASSERT_TRUE(wait_until([&] { return read_file(state) != last_good; }, 10s)) << daemon.stderr_text();
  EXPECT_EQ(daemon.stop(SIGTERM), 0);
}

TEST(Daemon, StdoutSinkWritesJsonLines) {
  DaemonRunner daemon("unused:1", GeneratorSettings{.keys = 5, .total_events = 30});
  daemon.write_config("sink:\n  type: stdout\n");
  daemon.start();
  ASSERT_TRUE(wait_until([&] { return daemon.committed_sequence().value_or(0) == 30; }, 30s)) << daemon.stderr_text();
  ASSERT_EQ(daemon.stop(SIGTERM), 0);
  std::istringstream lines(daemon.stdout_text());
  std::string line;
  int records = 0, tombstones = 0;
  while (std::getline(lines, line)) {
    const auto doc = nlohmann::json::parse(line);
    EXPECT_EQ(doc["topic"], daemon.name() + ".generator.t0");
    if (doc["value"].is_null()) {
      ++tombstones;
    } else {
      EXPECT_EQ(doc["value"]["source"]["sequence"], records - tombstones);
    }
    ++records;
  }
  // 30 changes over 5 keys: rounds c,u,d,c,u,d: 10 deletes, each followed by a tombstone.
  EXPECT_EQ(records, 40);
  EXPECT_EQ(tombstones, 10);
}

}  // namespace
}  // namespace tidemark::test
