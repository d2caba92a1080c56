#include "snapshot/chunk_worker.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/text_excerpt.hpp"
#include "core/reconnect_backoff.hpp"

namespace tidemark::snapshot {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxChunkFailures = 3;  // then the request is refused (a bad WHERE fails every time)
constexpr std::chrono::milliseconds kIdleWait{1000};
constexpr std::chrono::milliseconds kBacklogWait{5};
constexpr std::chrono::seconds kDescribeEvery{1};
constexpr std::chrono::milliseconds kFirstWatermarkWait{2000};

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split_columns(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(start, end - start);
    const size_t first = name.find_first_not_of(" \t");
    const size_t last = name.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(name.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

// While it lives, a stop signal for the table or the daemon's shutdown cancels the reader's query in flight
// (a chunk running for minutes would otherwise hold both up). A stop that came before it was registered is
// not seen by it: the caller checks, after constructing it, that the query is still wanted.
class QueryInFlight {
 public:
  QueryInFlight(SnapshotCoordinator& coordinator, SnapshotReader& reader) : coordinator_(coordinator), reader_(reader) {
    reader_.clear_cancel();
    coordinator_.set_query_canceller([&reader] { reader.cancel(); });
  }
  ~QueryInFlight() {
    coordinator_.set_query_canceller(nullptr);
    reader_.clear_cancel();
  }
  QueryInFlight(const QueryInFlight&) = delete;
  QueryInFlight& operator=(const QueryInFlight&) = delete;

 private:
  SnapshotCoordinator& coordinator_;
  SnapshotReader& reader_;
};

}  // namespace

ChunkWorker::ChunkWorker(const Config& config, SnapshotReader& reader, SnapshotCoordinator& coordinator,
                         std::function<BacklogReading()> backlog)
    : pipeline_(config.name),
      default_chunk_size_(config.snapshot.chunk_size),
      watermark_timeout_(config.snapshot.watermark_timeout_ms),
      surrogate_keys_(config.snapshot.surrogate_keys),
      reader_(reader),
      coordinator_(coordinator),
      backlog_(std::move(backlog)),
      backlog_bound_(config.snapshot.chunk_size, config.snapshot.max_backlog_events,
                     std::chrono::milliseconds(config.snapshot.target_ack_latency_ms)),
      chunk_rows_(config.snapshot.chunk_size),
      max_chunks_per_second_(config.snapshot.max_chunks_per_second),
      max_backlog_events_(config.snapshot.max_backlog_events),
      target_ack_latency_ms_(config.snapshot.target_ack_latency_ms),
      chunks_in_flight_(config.snapshot.chunks_in_flight),
      max_chunk_size_(config.snapshot.max_chunk_size),
      random_(std::random_device{}()) {}

void ChunkWorker::reconfigure(const Config& config) {
  max_chunks_per_second_ = config.snapshot.max_chunks_per_second;
  max_backlog_events_ = config.snapshot.max_backlog_events;
  target_ack_latency_ms_ = config.snapshot.target_ack_latency_ms;
  chunks_in_flight_ = config.snapshot.chunks_in_flight;
  max_chunk_size_ = config.snapshot.max_chunk_size;
}

std::string ChunkWorker::fresh_mark() {
  Uuid u;
  const uint64_t a = random_();
  const uint64_t b = random_();
  for (int i = 0; i < 8; ++i) {
    u.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(a >> (8 * i));
    u.bytes[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(b >> (8 * i));
  }
  u.bytes[6] = static_cast<uint8_t>((u.bytes[6] & 0x0f) | 0x40);  // version 4
  u.bytes[8] = static_cast<uint8_t>((u.bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return uuid_to_string(u);
}

std::vector<std::string> ChunkWorker::surrogate_key(const std::string& table) const {
  const auto it = surrogate_keys_.find(table);
  return it == surrogate_keys_.end() ? std::vector<std::string>{} : split_columns(it->second);
}

bool ChunkWorker::connect(std::stop_token stop) {
  ReconnectBackoff backoff;
  for (;;) {
    backoff.session_started();
    const auto error = reader_.connect();
    if (!error) return true;
    spdlog::warn("snapshot connection: {}; retrying in {} s", *error, backoff.next_delay().count());
    backoff.wait(stop);
    if (stop.stop_requested()) return false;
  }
}

void ChunkWorker::refuse(const std::string& table, const std::string& why, bool current) {
  const std::string error = "snapshot of " + excerpt(table, 100) + " refused: " + excerpt(why, 1000);
  spdlog::error("{}", error);
  coordinator_.update([&](SnapshotState& s) {
    s.last_error = error;
    if (current) {
      if (s.current && s.current->request.table == table) s.current.reset();
    } else if (!s.queue.empty() && s.queue.front().table == table) {
      s.queue.pop_front();
    }
  });
}

void ChunkWorker::start_next_table(const TableRequest& request, std::stop_token stop) {
  // Cancelled by shutdown or a stop signal (catalog queries wait too, for a table another session locked):
  // nothing to refuse then.
  const QueryInFlight in_flight(coordinator_, reader_);
  auto dropped = [&] {
    const SnapshotState now = coordinator_.state();
    return stop.stop_requested() || now.queue.empty() || !(now.queue.front() == request);
  };
  if (dropped()) return;
  Fallible<TableLayout> layout = reader_.describe(request.table, surrogate_key(request.table));
  if (!layout.ok() && dropped()) return;
  if (!layout.ok()) return refuse(request.table, layout.error, false);
  if (!request.where.empty()) {
    if (auto bad = check_row_filter(request.where, layout.value->schema->columns, reader_.sql_dialect()))
      return refuse(request.table, "its condition is not allowed: " + *bad + " (see docs/security.md)", false);
  }
  std::optional<KeyText> max_key = request.upto;
  if (!max_key) {
    Fallible<std::optional<KeyText>> found = reader_.max_key(*layout.value, request.where);
    if (dropped()) return;
    if (!found.ok()) return refuse(request.table, found.error, false);
    max_key = *found.value;
  }
  coordinator_.update([&](SnapshotState& s) {
    if (s.queue.empty() || !(s.queue.front() == request)) return;  // a stop signal came in between
    s.queue.pop_front();
    if (!max_key) {
      spdlog::info("snapshot of {}: no rows to read", request.table);
      s.tables_done += 1;
      return;
    }
    spdlog::info("snapshot of {} started{}", request.table, request.where.empty() ? "" : " where " + excerpt(request.where));
    TableProgress progress;
    progress.request = request;
    progress.last_key = request.after;
    progress.max_key = max_key;
    progress.started_ms = wall_clock_ms();
    s.current = std::move(progress);
  });
}

bool ChunkWorker::backlog_over_bound() {
  if (!backlog_) return false;
  const BacklogReading reading = backlog_();
  backlog_bound_.set_limits(chunk_rows_, max_backlog_events_.load(), std::chrono::milliseconds(target_ack_latency_ms_.load()));
  const int64_t bound = backlog_bound_.update(reading, Clock::now());
  // An open window's rows join the backlog at its high watermark, all at once: they count from the start, so
  // that the windows in flight are no burst the bound has not allowed (the first chunks, before any
  // acknowledgement was measured, above all).
  return reading.records + rows_in_flight() > static_cast<uint64_t>(bound);
}

uint64_t ChunkWorker::rows_in_flight() const {
  uint64_t rows = 0;
  for (const InFlight& w : in_flight_) rows += static_cast<uint64_t>(w.rows);
  return rows;
}

int64_t ChunkWorker::next_chunk_rows(const TableRequest& request) const {
  if (request.chunk_size > 0) return request.chunk_size;
  // Without a latency target the bound is the configured ceiling, not a measurement: nothing to adapt to. A
  // rate in chunks per second paces the database by the configured chunk.
  if (!backlog_ || target_ack_latency_ms_.load() == 0 || max_chunks_per_second_.load() > 0) return default_chunk_size_;
  return adaptive_chunk_rows(backlog_bound_.bound(), chunks_in_flight_.load(), default_chunk_size_, max_chunk_size_.load());
}

bool ChunkWorker::throttled() {
  if (backlog_over_bound()) {
    if (!backlog_logged_)
      spdlog::debug("snapshot: holding the next chunk while the records waiting for Kafka and the open windows' rows "
                    "are more than {}", backlog_bound_.bound());
    backlog_logged_ = true;
    return true;
  }
  backlog_logged_ = false;
  const int64_t rate = max_chunks_per_second_.load();
  if (rate > 0 && Clock::now() < next_chunk_at_) return true;
  if (rate > 0) next_chunk_at_ = Clock::now() + std::chrono::microseconds(1'000'000 / rate);
  return false;
}

std::optional<std::string> ChunkWorker::next_step(const TableProgress& current, std::stop_token stop) {
  const std::vector<Row> spent = coordinator_.take_spent();  // freed here, on the thread that allocated them
  chunk_rows_ = current.request.chunk_size > 0 ? current.request.chunk_size : default_chunk_size_;
  if (const uint64_t restarts = coordinator_.restarts(); restarts != restarts_seen_ || in_flight_.empty()) {
    // Nothing open (any more): the next chunk starts after the last emitted one. A chained window is closed
    // only with the others (which bumps restarts), so it survives its predecessors' normal close.
    if (restarts != restarts_seen_) chained_.reset();
    restarts_seen_ = restarts;
    in_flight_.clear();
    read_after_ = current.last_key;
    table_read_ = false;
  }
  const bool room = static_cast<int64_t>(in_flight_.size()) < std::max<int64_t>(1, chunks_in_flight_.load());
  if (room && chained_ && !backlog_over_bound()) {
    // Opened on the previous window's high watermark, which is already written: read it before anything
    // else (the rate bound and the pause allowed it when it opened; the backlog bound is checked above),
    // under the layout it was opened with.
    if (describe_current(current.request, stop) && layout_->schema->id == chained_->table &&
        layout_->key_names == chained_->key_names) {
      if (const std::optional<InFlight> window = read_window(current, read_after_, stop))
        in_flight_.push_back(*window);
    } else if (chained_) {
      coordinator_.cancel_window(chained_->id);  // and the windows before it: read again from the last emitted key
      chained_.reset();
    }
    return std::nullopt;
  }
  if (room && !chained_ && !table_read_ && !coordinator_.state().paused && !throttled()) {
    if (!describe_current(current.request, stop)) return std::nullopt;
    if (const std::optional<InFlight> window = read_window(current, read_after_, stop))
      in_flight_.push_back(*window);
    return std::nullopt;
  }
  if (in_flight_.empty()) {  // throttled or paused with nothing open (or a chained window waiting for the backlog)
    coordinator_.wait_for_change(stop, kBacklogWait);
    return std::nullopt;
  }
  const uint64_t oldest = in_flight_.front().id;
  if (auto fatal = await_window(current.request, oldest, stop)) return fatal;
  if (!coordinator_.window_open(oldest) && !in_flight_.empty() && in_flight_.front().id == oldest) in_flight_.pop_front();
  return std::nullopt;
}

bool ChunkWorker::may_chain(bool finished) {
  // A chained window records the log's keys from the moment its predecessor's high watermark passes, so it
  // opens only when it will be read soon: not under a rate bound or a pause. A full backlog does not stop
  // it: the window then waits, recording, only as long as Kafka takes to drain the backlog under its bound
  // (milliseconds), and saves a low watermark commit; under a steady backlog most windows would otherwise
  // write their own.
  return !finished && max_chunks_per_second_.load() == 0 && !coordinator_.state().paused;
}

bool ChunkWorker::describe_current(const TableRequest& request, const std::stop_token& stop) {
  // Described again at least every kDescribeEvery, so a column added or dropped mid-snapshot shows within a
  // second, without catalog queries for every chunk.
  if (layout_ && layout_table_ == request.table && Clock::now() - described_at_ < kDescribeEvery) return true;
  auto still_current = [&] {
    const SnapshotState now = coordinator_.state();
    return !stop.stop_requested() && now.current && now.current->request == request;
  };
  Fallible<TableLayout> described = [&] {
    const QueryInFlight in_flight(coordinator_, reader_);
    if (!still_current()) return Fallible<TableLayout>::failure("the snapshot of the table was stopped");
    return reader_.describe(request.table, surrogate_key(request.table));
  }();
  if (stop.stop_requested()) return false;
  if (!described.ok()) {
    const SnapshotState now = coordinator_.state();
    if (!now.current || !(now.current->request == request)) return false;  // a stop signal dropped it
    layout_.reset();
    refuse(request.table, described.error, true);
    return false;
  }
  layout_ = std::move(*described.value);
  layout_table_ = request.table;
  described_at_ = Clock::now();
  return true;
}

std::optional<ChunkWorker::InFlight> ChunkWorker::read_window(const TableProgress& current,
                                                              const std::optional<KeyText>& after,
                                                              const std::stop_token& stop) {
  const TableRequest& request = current.request;
  const TableLayout* layout = &*layout_;
  // A chained window is open already, and its low watermark (the previous window's high) is written.
  const bool chained = chained_.has_value();
  Window window;
  if (chained) {
    window.id = chained_->id;
    window.low = chained_->low;
    window.high = chained_->high;
    chained_.reset();
  } else {
    window.id = ++next_window_id_;
    window.table = layout->schema->id;
    window.key_names = layout->key_names;
    window.low = fresh_mark();
    window.high = fresh_mark();
  }
  const uint64_t id = window.id;
  const std::string low = window.low;
  const std::string high = window.high;
  if (!chained) coordinator_.open_window(std::move(window));

  auto fail = [&](const std::string& what) {
    coordinator_.cancel_window(id);  // closes a window chained onto it too
    chained_.reset();
    layout_.reset();  // described again: the failure may come from a changed table
    spdlog::warn("snapshot of {}: {}", request.table, what);
    if (failing_table_ != request.table) failures_ = 0;
    failing_table_ = request.table;
    if (++failures_ >= kMaxChunkFailures) {
      failures_ = 0;
      refuse(request.table, what, true);
      return std::optional<InFlight>();
    }
    connect(stop);
    return std::optional<InFlight>();
  };

  if (!chained) {
    if (auto error = reader_.write_watermark(low)) return fail("cannot write the low watermark: " + *error);
  }
  ChunkQuery query;
  query.layout = layout;
  query.where = request.where;
  query.after = after;
  query.upto = current.max_key;
  const int64_t rows = next_chunk_rows(request);
  query.limit = static_cast<size_t>(rows);
  query.stop = stop;
  Fallible<Chunk> chunk = [&] {
    const QueryInFlight in_flight(coordinator_, reader_);
    if (stop.stop_requested() || !coordinator_.window_open(id)) return Fallible<Chunk>::failure("the chunk was stopped");
    return reader_.read_chunk(query);
  }();
  // Shutdown, or a stop signal dropped the table (and closed the window): the chunk is not wanted.
  if (stop.stop_requested() || !coordinator_.window_open(id)) {
    coordinator_.cancel_window(id);
    return std::nullopt;
  }
  if (!chunk.ok()) return fail("chunk query failed: " + chunk.error);
  const bool finished = chunk.value->rows.size() < query.limit;
  if (!chunk.value->last_key.empty()) read_after_ = chunk.value->last_key;
  table_read_ = finished;
  if (read_counts_.table != request.table) read_counts_ = ReadCounts{request.table};
  read_counts_.windows += 1;
  read_counts_.chained += chained ? 1 : 0;
  read_counts_.most_in_flight = std::max(read_counts_.most_in_flight, in_flight_.size() + 1);
  read_counts_.largest_chunk = std::max(read_counts_.largest_chunk, rows);
  if (finished)
    spdlog::info("snapshot of {}: every chunk read ({} windows, {} of them opened on the previous high watermark, up to {} "
                 "in flight, chunks of up to {} rows)", request.table, read_counts_.windows, read_counts_.chained,
                 read_counts_.most_in_flight, read_counts_.largest_chunk);
  spdlog::debug("snapshot of {}: window {}{} read {} rows (after {}, up to {})", request.table, id, chained ? " (chained)" : "",
                chunk.value->rows.size(), query.after ? "a key" : "the start", query.upto ? "a key" : "the end");
  coordinator_.attach_rows(id, layout->schema, std::move(chunk.value->rows), std::move(chunk.value->last_key), finished);
  if (may_chain(finished)) {
    // The next window opens on this high watermark: registered before the mark is written, so the merge
    // stage records its keys from that very point of the log, and its chunk is read after the commit.
    Window next;
    next.id = ++next_window_id_;
    next.table = layout->schema->id;
    next.key_names = layout->key_names;
    next.low = high;
    next.high = fresh_mark();
    chained_ = Chained{next.id, next.table, next.key_names, next.low, next.high};
    coordinator_.open_window(std::move(next));
  }
  if (auto error = reader_.write_watermark(high)) return fail("cannot write the high watermark: " + *error);
  failures_ = 0;
  return InFlight{id, rows};
}

std::optional<std::string> ChunkWorker::await_window(const TableRequest& request, uint64_t id, const std::stop_token& stop) {
  // Until a first watermark of this pipeline has come through the log, the stream may not be live yet (a
  // PostgreSQL slot created moments after the watermarks were written never decodes them): then the chunk
  // is given up after a short wait and read again, until watermark_timeout_ms has passed since the first try.
  const bool proven = coordinator_.watermark_seen();
  const auto now = Clock::now();
  if (proven || !first_unseen_chunk_at_) first_unseen_chunk_at_ = now;
  const auto waited = now - *first_unseen_chunk_at_;
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(watermark_timeout_ - waited);
  const auto wait = proven ? watermark_timeout_ : std::max(std::chrono::milliseconds(1), std::min(kFirstWatermarkWait, remaining));
  switch (coordinator_.wait_closed(id, stop, wait)) {
    case SnapshotCoordinator::WaitResult::Closed:
    case SnapshotCoordinator::WaitResult::Stopped:
      if (proven || coordinator_.watermark_seen()) first_unseen_chunk_at_.reset();
      return std::nullopt;
    case SnapshotCoordinator::WaitResult::LowWatermarkMissing:
      if (!proven && waited + wait < watermark_timeout_) {
        coordinator_.cancel_window(id);
        spdlog::info("snapshot of {}: no watermark through the log yet; reading the chunk again", request.table);
        return std::nullopt;
      }
      return "the snapshot watermark written to the watermark table did not come through the log within " +
             std::to_string(watermark_timeout_.count()) +
             " ms: the watermark table is not captured (for PostgreSQL: add it to the publication; for MySQL: check "
             "binlog filters such as binlog-ignore-db), or the log is further behind than snapshot.watermark_timeout_ms";
  }
  return std::nullopt;
}

std::optional<std::string> ChunkWorker::run(std::stop_token stop) {
  const std::stop_callback cancel_on_stop(stop, [this] { coordinator_.cancel_query(); });
  if (!connect(stop)) return std::nullopt;
  while (!stop.stop_requested()) {
    const SnapshotState state = coordinator_.state();
    if (state.paused || state.idle()) {
      coordinator_.wait_for_change(stop, kIdleWait);
      continue;
    }
    if (!state.current) {
      start_next_table(state.queue.front(), stop);
      continue;
    }
    if (auto fatal = next_step(*state.current, stop)) return fatal;
  }
  return std::nullopt;
}

}  // namespace tidemark::snapshot
