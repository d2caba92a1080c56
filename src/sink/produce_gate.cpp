#include "sink/produce_gate.hpp"

#include <algorithm>

namespace tidemark {

namespace {

size_t size_of(int64_t n) { return n < 0 ? 0 : static_cast<size_t>(n); }

}  // namespace

ProduceGate::Topic& ProduceGate::topic(TopicIndex index) {
  if (index >= topics_.size()) topics_.resize(index + 1);
  return topics_[index];
}

void ProduceGate::set_budget(TopicIndex index, size_t bytes) { topic(index).budget = bytes; }

void ProduceGate::set_partitions(TopicIndex index, uint32_t partitions) { topic(index).partitions = partitions; }

void ProduceGate::hold(const Record& record, Clock::time_point now) {
  Topic& t = topic(record.topic);
  if (t.held_count() == 0) waiting_.push_back(record.topic);
  const int64_t key_size = record.key ? static_cast<int64_t>(record.key->size()) : -1;
  const int64_t value_size = record.value ? static_cast<int64_t>(record.value->size()) : -1;
  t.held.push_back(Held{t.bytes.size(), key_size, value_size, record.ticket, now});
  if (record.key) t.bytes.append(*record.key);
  if (record.value) t.bytes.append(*record.value);
  ++held_records_;
  held_bytes_ += size_of(key_size) + size_of(value_size);
}

bool ProduceGate::release(const HandOver& hand_over, Clock::time_point now, bool force) {
  bool ok = true;
  // release_topic may leave a topic waiting; the list is rebuilt from those still holding records.
  std::vector<TopicIndex> waiting;
  waiting.swap(waiting_);
  for (const TopicIndex index : waiting) {
    if (ok && !release_topic(index, hand_over, now, force)) ok = false;
    if (topics_[index].held_count() > 0) waiting_.push_back(index);
  }
  return ok;
}

bool ProduceGate::release_topic(TopicIndex index, const HandOver& hand_over, Clock::time_point now, bool force) {
  Topic& t = topics_[index];
  const size_t held = t.held_count();
  if (held == 0) return true;
  if (!force && t.in_flight > 0 && t.in_flight + held >= kInFlightCap) return true;
  // The rest of a release librdkafka could not take whole goes first: its records are older than the rest.
  if (!hand_release(index, t, hand_over)) return false;
  if (t.handed == t.release.size() && t.next < t.held.size()) {
    start_release(index, t, force ? SIZE_MAX : t.budget.value_or(default_budget_), now);
    if (!hand_release(index, t, hand_over)) return false;
  }
  compact(t);
  return true;
}

void ProduceGate::start_release(TopicIndex index, Topic& t, size_t budget, Clock::time_point now) {
  size_t end = t.next;
  size_t bytes = 0;
  while (end < t.held.size() && (end == t.next || bytes < budget)) {
    bytes += size_of(t.held[end].key_size) + size_of(t.held[end].value_size);
    ++end;
  }
  t.releases.push_back(Release{t.held[t.next].ticket, t.held[end - 1].ticket, end - t.next,
                               std::chrono::duration_cast<std::chrono::microseconds>(now - t.held[t.next].since)});
  t.release.clear();
  t.handed = 0;
  const uint32_t partitions = partition_of_ ? t.partitions : 0;
  if (partitions <= 1 || end - t.next == 1) {
    for (size_t i = t.next; i < end; ++i) t.release.push_back(static_cast<uint32_t>(i));
    t.next = end;
    return;
  }
  // A stable counting sort by partition; keyless records share the last bucket.
  t.partition_of.clear();
  std::vector<size_t> starts(partitions + 2, 0);
  const std::string_view stored(t.bytes);
  for (size_t i = t.next; i < end; ++i) {
    const Held& h = t.held[i];
    const uint32_t p =
        h.key_size < 0 ? partitions
                       : std::min(partition_of_(index, stored.substr(h.at, size_of(h.key_size)), partitions), partitions - 1);
    t.partition_of.push_back(p);
    ++starts[p + 1];
  }
  for (size_t p = 1; p < starts.size(); ++p) starts[p] += starts[p - 1];
  t.release.resize(end - t.next);
  for (size_t i = t.next; i < end; ++i) t.release[starts[t.partition_of[i - t.next]]++] = static_cast<uint32_t>(i);
  t.next = end;
}

bool ProduceGate::hand_release(TopicIndex index, Topic& t, const HandOver& hand_over) {
  const std::string_view stored(t.bytes);
  while (t.handed < t.release.size()) {
    const Held& h = t.held[t.release[t.handed]];
    const size_t key = size_of(h.key_size);
    const size_t value = size_of(h.value_size);
    const Record record{index, h.key_size < 0 ? std::nullopt : std::optional(stored.substr(h.at, key)),
                        h.value_size < 0 ? std::nullopt : std::optional(stored.substr(h.at + key, value)), h.ticket};
    const Handed handed = hand_over(record);
    if (handed != Handed::Queued) return handed != Handed::Failed;
    ++t.in_flight;
    ++t.handed;
    held_bytes_ -= key + value;
    in_flight_bytes_ += key + value;
    --held_records_;
  }
  return true;
}

void ProduceGate::compact(Topic& t) {
  if (t.handed < t.release.size()) return;  // the release's indices point into `held`
  t.release.clear();
  t.handed = 0;
  if (t.next == t.held.size()) {
    t.held.clear();
    t.bytes.clear();
    t.next = 0;
    if (t.bytes.capacity() > (size_t{16} << 20)) t.bytes.shrink_to_fit();
    return;
  }
  // Most releases leave nothing behind; a backlog is moved down once half of it has gone.
  if (t.next < 1024 || t.next * 2 < t.held.size()) return;
  const size_t from = t.held[t.next].at;
  t.bytes.erase(0, from);
  t.held.erase(t.held.begin(), t.held.begin() + static_cast<std::ptrdiff_t>(t.next));
  for (Held& h : t.held) h.at -= from;
  t.next = 0;
}

std::chrono::microseconds ProduceGate::delivered(TopicIndex index, Ticket ticket, size_t bytes) {
  in_flight_bytes_ -= std::min(bytes, in_flight_bytes_);
  if (index >= topics_.size()) return {};
  Topic& t = topics_[index];
  if (t.in_flight > 0) --t.in_flight;
  std::chrono::microseconds waited{0};
  for (Release& r : t.releases) {
    if (ticket < r.first) break;
    if (ticket <= r.last) {
      waited = r.waited;
      if (r.undelivered > 0) --r.undelivered;
      break;
    }
  }
  while (!t.releases.empty() && t.releases.front().undelivered == 0) t.releases.pop_front();
  return waited;
}

}  // namespace tidemark
