#pragma once

#include <atomic>
#include <cstdint>

namespace tidemark::snapshot {

// How a snapshot reader is cancelled from another thread without losing the cancel.
//
// Asking the server to cancel the running statement (KILL QUERY, PQcancel) is lost when it arrives
// before the statement does. So a cancel ends the reader's whole server session instead, which stops a
// running statement and fails any statement sent after it, and it leaves a mark that a session
// connected meanwhile sees.
//
// Invariant: after request(), either the session it returned is being ended by the caller, or the
// session published next finds cancelled() true; until clear(), no statement of the reader runs to its end.
class SessionCancel {
 public:
  // From the cancelling thread: marks the reader cancelled and returns the server session to end
  // (0: none is connected yet).
  uint64_t request() {
    cancelled_ = true;
    const uint64_t id = session_.load();
    if (id != 0) ended_ = true;
    return id;
  }
  // From the reader's thread, at the start and end of each cancellable query.
  void clear() { cancelled_ = false; }
  bool cancelled() const { return cancelled_.load(); }

  // From the reader's thread, after connecting: false when a cancel came in while it connected.
  bool publish(uint64_t session) {
    session_ = session;
    return !cancelled_.load();
  }
  // From the reader's thread, before it connects or drops its connection.
  void forget() {
    session_ = 0;
    ended_ = false;
  }
  // True once after request() ended a session: the connection is dead and is made again.
  bool take_ended() { return ended_.exchange(false); }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> ended_{false};
  std::atomic<uint64_t> session_{0};
};

}  // namespace tidemark::snapshot
