// tidemark-dev-broker: a zero-setup Kafka endpoint for the demo and for
// fault-injection tests, built on librdkafka's in-process mock cluster.
//
// It prints one line `bootstrap=HOST:PORT[,HOST:PORT...]` on stdout, then
// takes control commands on stdin (one per line, each answered `ok` or
// `error: <reason>`) until SIGTERM/SIGINT. See docs/dev-broker.md.
//
// Limits of the librdkafka 2.0.2 mock (measured; see shared notes/kafka.md).
// Never assert these properties in tests that run against this broker:
//  - Transactions: every call succeeds and nothing happens. Aborted messages
//    are visible, transactional offsets are not stored, nothing is fenced.
//  - Idempotent producers are not deduplicated on retry: injected timeouts
//    produce duplicates.
//  - Each partition keeps only the last ~5 MB or 100k batches.
//  - Metadata reports controller id 0, so CreateTopics from clients fails.
//    Topics are created here (--topic, `topic`); unknown topics are
//    auto-created by the mock with 4 partitions, whatever --partitions says.
//  - Consumer groups: a rejoin after the last member left waits for
//    session.timeout.ms; offset commits during a rebalance are rejected.
//  - No SASL/SSL, listeners on 127.0.0.1 with random ports, nothing persists
//    across restarts.
//  - A mock API call now and then takes ~1 s (seen on back-to-back calls,
//    e.g. several --topic at start-up): wait for the bootstrap line or file
//    and for each `ok`, never for a fixed time.

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <CLI/CLI.hpp>

// The generated header exists only in a CMake build that puts the generated
// dir on this target's include path; a bare g++ build falls back below.
#if __has_include(<tidemark/version.hpp>)
#include <tidemark/version.hpp>
#define TIDEMARK_DEV_BROKER_VERSION tidemark::kVersion
#else
#define TIDEMARK_DEV_BROKER_VERSION "0.1.0"  // keep in step with project(VERSION)
#endif

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr const char* kProgram = "tidemark-dev-broker";
constexpr const char* kVersion = TIDEMARK_DEV_BROKER_VERSION;
constexpr int kDefaultBrokers = 1;
constexpr int kMaxBrokers = 64;
constexpr int kDefaultPartitions = 4;
constexpr int kMaxPartitions = 10000;
// Same cap the mock applies to the topics it auto-creates.
constexpr int kMaxReplicationFactor = 3;
constexpr int kAllBrokers = -1;   // mock API: -1 means every broker
constexpr int kNoLeader = -1;     // mock API: -1 makes a partition leaderless
constexpr long kMaxInjectedErrors = 1000000;  // bounds the array we allocate
constexpr long kMaxRttMs = 3600 * 1000;
constexpr std::size_t kMaxLineBytes = 4096;
constexpr std::size_t kReadChunkBytes = 4096;
constexpr std::string_view kErrPrefix = "RD_KAFKA_RESP_ERR_";
constexpr const char* kLogLevelWarning = "4";  // syslog levels

// No `--port`: librdkafka 2.0.2 always binds the mock listeners to
// 127.0.0.1:0 and has no API or `test.mock.*` property to pick the port,
// which is why the address is printed and written to --bootstrap-file.

// Kafka protocol request types. The mock implements only a subset (Produce,
// Fetch, ListOffsets, Metadata, group and transaction requests, ApiVersions,
// InitProducerId, OffsetForLeaderEpoch); errors queued for others never fire.
constexpr std::array<std::pair<std::string_view, int16_t>, 30> kApiKeys{{
    {"Produce", 0},          {"Fetch", 1},
    {"ListOffsets", 2},      {"Metadata", 3},
    {"OffsetCommit", 8},     {"OffsetFetch", 9},
    {"FindCoordinator", 10}, {"JoinGroup", 11},
    {"Heartbeat", 12},       {"LeaveGroup", 13},
    {"SyncGroup", 14},       {"DescribeGroups", 15},
    {"ListGroups", 16},      {"SaslHandshake", 17},
    {"ApiVersions", 18},     {"CreateTopics", 19},
    {"DeleteTopics", 20},    {"DeleteRecords", 21},
    {"InitProducerId", 22},  {"OffsetForLeaderEpoch", 23},
    {"AddPartitionsToTxn", 24}, {"AddOffsetsToTxn", 25},
    {"EndTxn", 26},          {"TxnOffsetCommit", 28},
    {"DescribeConfigs", 32}, {"AlterConfigs", 33},
    {"SaslAuthenticate", 36}, {"CreatePartitions", 37},
    {"DeleteGroups", 42},    {"OffsetDelete", 47},
}};

constexpr const char* kHelpText =
    "# down <broker_id|all>              refuse connections (no leader change)\n"
    "# up <broker_id|all>                accept connections again\n"
    "# rtt <broker_id|all> <ms>          delay every response by ms\n"
    "# error <ApiKey> <count> <Error>    next count requests of ApiKey fail\n"
    "# clear <ApiKey>                    drop queued errors for ApiKey\n"
    "# topic <name> [partitions]         create a topic\n"
    "# partition-leader <topic> <partition> <broker_id|none>\n"
    "# help                              this text\n";

// Empty on success, else the reason sent back as `error: <reason>`.
using Failure = std::optional<std::string>;

struct Options {
    int brokers = kDefaultBrokers;
    int partitions = kDefaultPartitions;
    std::vector<std::string> topics;
    std::string bootstrap_file;
};

struct KafkaDestroy {
    void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct ClusterDestroy {
    void operator()(rd_kafka_mock_cluster_t* mc) const {
        rd_kafka_mock_cluster_destroy(mc);
    }
};

// What a control command needs to act on.
struct Broker {
    rd_kafka_mock_cluster_t* cluster;
    int broker_count;
    int default_partitions;
};

bool iequals(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    });
}

std::optional<long> parse_long(std::string_view s, long min, long max) {
    long value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || value < min || value > max)
        return std::nullopt;
    return value;
}

std::vector<std::string_view> split_words(std::string_view line) {
    std::vector<std::string_view> words;
    std::size_t pos = 0;
    while (pos < line.size()) {
        const auto start = line.find_first_not_of(" \t\r", pos);
        if (start == std::string_view::npos) break;
        const auto end = std::min(line.find_first_of(" \t\r", start), line.size());
        words.push_back(line.substr(start, end - start));
        pos = end;
    }
    return words;
}

// "all" or an id in 1..broker_count (the mock numbers brokers from 1).
std::optional<int32_t> parse_broker_id(std::string_view s, int broker_count) {
    if (iequals(s, "all")) return kAllBrokers;
    const auto id = parse_long(s, 1, broker_count);
    if (!id) return std::nullopt;
    return static_cast<int32_t>(*id);
}

std::optional<int16_t> parse_api_key(std::string_view s) {
    for (const auto& [name, key] : kApiKeys)
        if (iequals(s, name)) return key;
    const auto key = parse_long(s, 0, INT16_MAX);
    if (!key) return std::nullopt;
    return static_cast<int16_t>(*key);
}

// Accepts librdkafka's error names (NOT_LEADER_FOR_PARTITION, _TRANSPORT,
// optionally with the RD_KAFKA_RESP_ERR_ prefix) or a numeric code.
std::optional<rd_kafka_resp_err_t> parse_error_code(std::string_view s) {
    if (s.size() > kErrPrefix.size() && iequals(s.substr(0, kErrPrefix.size()), kErrPrefix))
        s.remove_prefix(kErrPrefix.size());
    const auto number = parse_long(s, INT32_MIN, INT32_MAX);
    const rd_kafka_err_desc* descs = nullptr;
    std::size_t count = 0;
    rd_kafka_get_err_descs(&descs, &count);
    for (std::size_t i = 0; i < count; ++i) {
        if (descs[i].name == nullptr) continue;  // the table has gaps
        if (number ? descs[i].code == *number : iequals(s, descs[i].name))
            return descs[i].code;
    }
    return std::nullopt;
}

Failure mock_result(rd_kafka_resp_err_t err) {
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
    return std::string(rd_kafka_err2name(err)) + ": " + rd_kafka_err2str(err);
}

Failure create_topic(const Broker& b, const std::string& name, int partitions) {
    const int replication = std::min(b.broker_count, kMaxReplicationFactor);
    return mock_result(
        rd_kafka_mock_topic_create(b.cluster, name.c_str(), partitions, replication));
}

// ---- control commands: each validates its words, then makes one mock call.

using Words = std::vector<std::string_view>;

Failure cmd_down_up(const Broker& b, const Words& w, bool up) {
    if (w.size() != 2) return std::string("usage: ") + (up ? "up" : "down") + " <broker_id|all>";
    const auto id = parse_broker_id(w[1], b.broker_count);
    if (!id) return "bad broker id '" + std::string(w[1]) + "'";
    return mock_result(up ? rd_kafka_mock_broker_set_up(b.cluster, *id)
                          : rd_kafka_mock_broker_set_down(b.cluster, *id));
}

Failure cmd_down(const Broker& b, const Words& w) { return cmd_down_up(b, w, false); }
Failure cmd_up(const Broker& b, const Words& w) { return cmd_down_up(b, w, true); }

Failure cmd_rtt(const Broker& b, const Words& w) {
    if (w.size() != 3) return "usage: rtt <broker_id|all> <ms>";
    const auto id = parse_broker_id(w[1], b.broker_count);
    if (!id) return "bad broker id '" + std::string(w[1]) + "'";
    const auto ms = parse_long(w[2], 0, kMaxRttMs);
    if (!ms) return "bad rtt '" + std::string(w[2]) + "'";
    return mock_result(rd_kafka_mock_broker_set_rtt(b.cluster, *id, static_cast<int>(*ms)));
}

Failure cmd_error(const Broker& b, const Words& w) {
    if (w.size() != 4) return "usage: error <ApiKey> <count> <ErrorName|code>";
    const auto key = parse_api_key(w[1]);
    if (!key) return "unknown ApiKey '" + std::string(w[1]) + "'";
    const auto count = parse_long(w[2], 1, kMaxInjectedErrors);
    if (!count) return "bad count '" + std::string(w[2]) + "'";
    const auto err = parse_error_code(w[3]);
    if (!err) return "unknown error '" + std::string(w[3]) + "'";
    const std::vector<rd_kafka_resp_err_t> errors(static_cast<std::size_t>(*count), *err);
    rd_kafka_mock_push_request_errors_array(b.cluster, *key, errors.size(), errors.data());
    return std::nullopt;
}

Failure cmd_clear(const Broker& b, const Words& w) {
    if (w.size() != 2) return "usage: clear <ApiKey>";
    const auto key = parse_api_key(w[1]);
    if (!key) return "unknown ApiKey '" + std::string(w[1]) + "'";
    rd_kafka_mock_clear_request_errors(b.cluster, *key);
    return std::nullopt;
}

Failure cmd_topic(const Broker& b, const Words& w) {
    if (w.size() != 2 && w.size() != 3) return "usage: topic <name> [partitions]";
    auto partitions = std::optional<long>(b.default_partitions);
    if (w.size() == 3) partitions = parse_long(w[2], 1, kMaxPartitions);
    if (!partitions) return "bad partition count '" + std::string(w[2]) + "'";
    return create_topic(b, std::string(w[1]), static_cast<int>(*partitions));
}

Failure cmd_partition_leader(const Broker& b, const Words& w) {
    if (w.size() != 4) return "usage: partition-leader <topic> <partition> <broker_id|none>";
    const auto partition = parse_long(w[2], 0, kMaxPartitions - 1);
    if (!partition) return "bad partition '" + std::string(w[2]) + "'";
    const auto leader = iequals(w[3], "none") ? std::optional<long>(kNoLeader)
                                              : parse_long(w[3], 1, b.broker_count);
    if (!leader) return "bad broker id '" + std::string(w[3]) + "'";
    const std::string topic(w[1]);
    return mock_result(rd_kafka_mock_partition_set_leader(
        b.cluster, topic.c_str(), static_cast<int32_t>(*partition), static_cast<int32_t>(*leader)));
}

Failure cmd_help(const Broker&, const Words&) {
    std::fputs(kHelpText, stdout);
    return std::nullopt;
}

using Handler = Failure (*)(const Broker&, const Words&);
constexpr std::array<std::pair<std::string_view, Handler>, 8> kCommands{{
    {"down", cmd_down},   {"up", cmd_up},       {"rtt", cmd_rtt},
    {"error", cmd_error}, {"clear", cmd_clear}, {"topic", cmd_topic},
    {"partition-leader", cmd_partition_leader}, {"help", cmd_help},
}};

void reply(const Failure& failure) {
    if (failure)
        std::printf("error: %s\n", failure->c_str());
    else
        std::fputs("ok\n", stdout);
    std::fflush(stdout);  // a test waits on this line through a pipe
}

// Blank lines and `#` comments get no reply so command files can be commented.
void run_command(const Broker& b, std::string_view line) {
    const Words words = split_words(line);
    if (words.empty() || words[0].front() == '#') return;
    for (const auto& [name, handler] : kCommands) {
        if (words[0] == name) {
            reply(handler(b, words));
            return;
        }
    }
    reply("unknown command '" + std::string(words[0]) + "' (try help)");
}

// Splits stdin bytes into lines; overlong lines are rejected, not buffered.
class LineReader {
public:
    // Returns false once stdin is at EOF or unreadable.
    bool pump(const Broker& b) {
        char chunk[kReadChunkBytes];
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
        if (n <= 0) {
            if (!discarding_ && !pending_.empty()) run_command(b, pending_);
            pending_.clear();
            return false;
        }
        for (const char c : std::string_view(chunk, static_cast<std::size_t>(n))) accept(b, c);
        return true;
    }

private:
    void accept(const Broker& b, char c) {
        if (c == '\n') {
            if (!discarding_) run_command(b, pending_);
            pending_.clear();
            discarding_ = false;
        } else if (discarding_) {
            return;
        } else if (pending_.size() >= kMaxLineBytes) {
            reply("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
            pending_.clear();
            discarding_ = true;
        } else {
            pending_.push_back(c);
        }
    }

    std::string pending_;
    bool discarding_ = false;
};

// Readers poll for the file; rename makes it appear complete or not at all.
// No fsync: a crash loses the broker too, so durability buys nothing.
// Returns 0 or the errno of the step that failed.
int write_file_atomically(const std::string& path, const std::string& content) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    const ssize_t written = ::write(fd, content.data(), content.size());
    int err = written == static_cast<ssize_t>(content.size()) ? 0 : (written < 0 ? errno : EIO);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err != 0) ::unlink(tmp.c_str());
    return err;
}

std::unique_ptr<rd_kafka_t, KafkaDestroy> make_host_handle() {
    // The mock needs a client handle for bookkeeping only; it never connects.
    char errstr[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    // Hides the notice that this handle has no bootstrap.servers; warnings
    // and errors from the mock still reach stderr.
    rd_kafka_conf_set(conf, "log_level", kLogLevelWarning, errstr, sizeof errstr);
    rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == nullptr) {
        rd_kafka_conf_destroy(conf);  // ownership passes only on success
        std::fprintf(stderr, "%s: rd_kafka_new: %s\n", kProgram, errstr);
    }
    return std::unique_ptr<rd_kafka_t, KafkaDestroy>(rk);
}

// NAME or NAME:PARTITIONS; Kafka topic names cannot contain ':'.
bool create_startup_topic(const Broker& b, const std::string& spec) {
    const auto colon = spec.rfind(':');
    const std::string name = spec.substr(0, colon);
    auto partitions = std::optional<long>(b.default_partitions);
    if (colon != std::string::npos)
        partitions = parse_long(std::string_view(spec).substr(colon + 1), 1, kMaxPartitions);
    const Failure failure = name.empty() || !partitions
                                ? Failure("bad --topic value")
                                : create_topic(b, name, static_cast<int>(*partitions));
    if (failure)
        std::fprintf(stderr, "%s: topic '%s': %s\n", kProgram, spec.c_str(), failure->c_str());
    return !failure;
}

// Blocked before librdkafka starts its threads so they inherit the mask and
// only the signalfd sees SIGTERM/SIGINT.
int block_stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return -1;
    return signalfd(-1, &set, SFD_CLOEXEC);
}

// Serves stdin commands until a stop signal; EOF on stdin only stops reading.
// Returns the process exit status.
int serve_until_signal(const Broker& b, int signal_fd) {
    LineReader reader;
    bool stdin_open = true;
    for (;;) {
        pollfd fds[] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        if (::poll(fds, stdin_open ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            std::perror("poll");
            return 1;
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info{};
            if (::read(signal_fd, &info, sizeof info) == sizeof info)
                std::fprintf(stderr, "%s: %s, stopping\n", kProgram,
                             strsignal(static_cast<int>(info.ssi_signo)));
            return 0;
        }
        if (!stdin_open) continue;
        if (fds[1].revents & POLLNVAL)
            stdin_open = false;  // stdin was closed before we started
        else if (fds[1].revents != 0)
            stdin_open = reader.pump(b);
    }
}

Options parse_options(int argc, char** argv) {
    Options opt;
    CLI::App app{"Kafka mock cluster for the Tidemark demo and fault-injection tests", kProgram};
    app.set_version_flag("--version", std::string(kProgram) + " " + kVersion +
                                          " (librdkafka " + rd_kafka_version_str() + ")");
    app.add_option("--brokers", opt.brokers, "number of mock brokers (ids 1..N)")
        ->check(CLI::Range(1, kMaxBrokers));
    app.add_option("--partitions", opt.partitions, "partitions for topics given without a count")
        ->check(CLI::Range(1, kMaxPartitions));
    app.add_option("--topic", opt.topics, "NAME[:PARTITIONS], repeatable");
    app.add_option("--bootstrap-file", opt.bootstrap_file,
                   "also write the bootstrap address here (atomically)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::exit(app.exit(e));
    }
    return opt;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse_options(argc, argv);
    std::signal(SIGPIPE, SIG_IGN);  // a vanished reader must not kill the broker

    const int signal_fd = block_stop_signals();
    if (signal_fd < 0) {
        std::perror("signalfd");
        return 1;
    }
    // Declared in this order so the cluster is destroyed before its handle.
    const auto host = make_host_handle();
    if (!host) return 1;
    const std::unique_ptr<rd_kafka_mock_cluster_t, ClusterDestroy> cluster(
        rd_kafka_mock_cluster_new(host.get(), opt.brokers));
    if (!cluster) {
        std::fprintf(stderr, "%s: could not create the mock cluster\n", kProgram);
        return 1;
    }
    const Broker broker{cluster.get(), opt.brokers, opt.partitions};
    for (const auto& spec : opt.topics)
        if (!create_startup_topic(broker, spec)) return 1;

    const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(cluster.get());
    if (!opt.bootstrap_file.empty()) {
        if (const int err = write_file_atomically(opt.bootstrap_file, bootstrap + "\n"); err != 0) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", kProgram,
                         opt.bootstrap_file.c_str(), std::strerror(err));
            return 1;
        }
    }
    std::printf("bootstrap=%s\n", bootstrap.c_str());
    std::fflush(stdout);

    const int status = serve_until_signal(broker, signal_fd);
    // A stale address would point the next test run at a dead port.
    if (!opt.bootstrap_file.empty()) ::unlink(opt.bootstrap_file.c_str());
    ::close(signal_fd);
    return status;
}
