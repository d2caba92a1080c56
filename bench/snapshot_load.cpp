// Background workload for bench/snapshot_bench.sh: single-row UPDATE transactions at a fixed rate on a small
// table, each stamping the row with the database's clock at execution time (column ts_us, microseconds since
// the epoch), so that the latency from commit to Kafka can be read off the records afterwards.
//
//   bench_snapshot_load --db postgres|mysql --host H --port P --user U --password W --database D
//                       --table T --rows N --rate R --threads K
//
// Runs until SIGTERM/SIGINT, then prints one line: transactions, seconds, achieved rate, and the client-side
// round trip of one transaction (statement + commit; autocommit) at p50/p99 in ms. The table must hold ids
// 1..N and columns n bigint, ts_us bigint. Each thread has its own connection and paces itself on an
// absolute schedule (R/K per second); a thread that falls behind by more than 100 ms drops the missed slots.

#include <libpq-fe.h>
#include <mysql.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct Options {
  std::string db, host = "127.0.0.1", user, password, database, table;
  int port = 0;
  long rows = 1000;
  double rate = 1000;
  int threads = 2;
};

struct Result {
  long transactions = 0;
  long failures = 0;
  std::vector<float> round_trip_ms;
};

using Clock = std::chrono::steady_clock;

void run_thread(const Options& o, int index, Result& out) {
  std::mt19937_64 random(std::random_device{}() + static_cast<unsigned>(index));
  std::uniform_int_distribution<long> pick(1, o.rows);
  PGconn* pg = nullptr;
  MYSQL* my = nullptr;
  std::string ts_expr;
  if (o.db == "postgres") {
    const std::string conninfo = "host=" + o.host + " port=" + std::to_string(o.port) + " user=" + o.user +
                                 " password=" + o.password + " dbname=" + o.database;
    pg = PQconnectdb(conninfo.c_str());
    if (PQstatus(pg) != CONNECTION_OK) {
      std::fprintf(stderr, "connect: %s\n", PQerrorMessage(pg));
      std::exit(2);
    }
    ts_expr = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";
  } else {
    my = mysql_init(nullptr);
    if (!mysql_real_connect(my, o.host.c_str(), o.user.c_str(), o.password.c_str(), o.database.c_str(),
                            static_cast<unsigned>(o.port), nullptr, 0)) {
      std::fprintf(stderr, "connect: %s\n", mysql_error(my));
      std::exit(2);
    }
    mysql_autocommit(my, 1);
    ts_expr = "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)";
  }
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.threads / o.rate));
  auto next = Clock::now() + interval * index / o.threads;
  char sql[512];
  while (!g_stop) {
    std::this_thread::sleep_until(next);
    next += interval;
    if (Clock::now() - next > std::chrono::milliseconds(100)) next = Clock::now();
    std::snprintf(sql, sizeof sql, "UPDATE %s SET n = n + 1, ts_us = %s WHERE id = %ld", o.table.c_str(),
                  ts_expr.c_str(), pick(random));
    const auto t0 = Clock::now();
    bool ok;
    if (pg) {
      PGresult* r = PQexec(pg, sql);
      ok = PQresultStatus(r) == PGRES_COMMAND_OK;
      if (!ok && out.failures == 0) std::fprintf(stderr, "update: %s\n", PQerrorMessage(pg));
      PQclear(r);
    } else {
      ok = mysql_real_query(my, sql, std::strlen(sql)) == 0;
      if (!ok && out.failures == 0) std::fprintf(stderr, "update: %s\n", mysql_error(my));
    }
    const auto t1 = Clock::now();
    if (ok) {
      ++out.transactions;
      out.round_trip_ms.push_back(std::chrono::duration<float, std::milli>(t1 - t0).count());
    } else if (++out.failures > 100) {
      std::fprintf(stderr, "too many failures\n");
      break;
    }
  }
  if (pg) PQfinish(pg);
  if (my) mysql_close(my);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--db") o.db = v;
    else if (k == "--host") o.host = v;
    else if (k == "--port") o.port = std::atoi(v.c_str());
    else if (k == "--user") o.user = v;
    else if (k == "--password") o.password = v;
    else if (k == "--database") o.database = v;
    else if (k == "--table") o.table = v;
    else if (k == "--rows") o.rows = std::atol(v.c_str());
    else if (k == "--rate") o.rate = std::atof(v.c_str());
    else if (k == "--threads") o.threads = std::max(1, std::atoi(v.c_str()));
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if ((o.db != "postgres" && o.db != "mysql") || o.table.empty() || o.port == 0) {
    std::fprintf(stderr, "usage: %s --db postgres|mysql --host H --port P --user U --password W --database D "
                         "--table T [--rows N] [--rate R] [--threads K]\n", argv[0]);
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  mysql_library_init(0, nullptr, nullptr);
  std::vector<Result> results(static_cast<size_t>(o.threads));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < o.threads; ++i) threads.emplace_back(run_thread, std::cref(o), i, std::ref(results[static_cast<size_t>(i)]));
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  long transactions = 0, failures = 0;
  std::vector<float> rt;
  for (auto& r : results) {
    transactions += r.transactions;
    failures += r.failures;
    rt.insert(rt.end(), r.round_trip_ms.begin(), r.round_trip_ms.end());
  }
  std::sort(rt.begin(), rt.end());
  auto pct = [&](double p) { return rt.empty() ? 0.0 : static_cast<double>(rt[std::min(rt.size() - 1, static_cast<size_t>(p * static_cast<double>(rt.size())))]); };
  std::printf("transactions=%ld failures=%ld seconds=%.2f rate=%.0f rt_p50_ms=%.2f rt_p99_ms=%.2f\n", transactions,
              failures, seconds, static_cast<double>(transactions) / seconds, pct(0.50), pct(0.99));
  mysql_library_end();
  return 0;
}
