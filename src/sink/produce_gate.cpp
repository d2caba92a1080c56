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

void ProduceGate::hold(const Record& record, Clock::time_point now) {
  Topic& t = topic(record.topic);
  if (t.next == t.held.size()) waiting_.push_back(record.topic);
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
    const Topic& t = topics_[index];
    if (t.next < t.held.size()) waiting_.push_back(index);
  }
  return ok;
}

bool ProduceGate::release_topic(TopicIndex index, const HandOver& hand_over, Clock::time_point now, bool force) {
  Topic& t = topics_[index];
  const size_t held = t.held.size() - t.next;
  if (held == 0) return true;
  if (!force && t.in_flight > 0 && t.in_flight + held >= kInFlightCap) return true;
  const size_t budget = force ? SIZE_MAX : t.budget.value_or(default_budget_);
  size_t bytes = 0;
  Release release{t.held[t.next].ticket, 0, 0,
                  std::chrono::duration_cast<std::chrono::microseconds>(now - t.held[t.next].since)};
  bool ok = true;
  while (t.next < t.held.size() && (release.undelivered == 0 || bytes < budget)) {
    const Held& h = t.held[t.next];
    const size_t key = size_of(h.key_size);
    const size_t value = size_of(h.value_size);
    const std::string_view stored(t.bytes);
    const Record record{index, h.key_size < 0 ? std::nullopt : std::optional(stored.substr(h.at, key)),
                        h.value_size < 0 ? std::nullopt : std::optional(stored.substr(h.at + key, value)), h.ticket};
    const Handed handed = hand_over(record);
    if (handed != Handed::Queued) {
      ok = handed != Handed::Failed;
      break;
    }
    ++t.in_flight;
    ++release.undelivered;
    release.last = h.ticket;
    bytes += key + value;
    held_bytes_ -= key + value;
    in_flight_bytes_ += key + value;
    --held_records_;
    ++t.next;
  }
  if (release.undelivered > 0) t.releases.push_back(release);
  compact(t);
  return ok;
}

void ProduceGate::compact(Topic& t) {
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
