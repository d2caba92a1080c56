#pragma once
// The daemon's HTTP endpoints (cpp-httplib), on http.listen, served by two threads of their own:
//   GET /metrics   Prometheus text exposition of the pipeline's metrics
//   GET /healthz   200 while the daemon's loops are alive, 503 otherwise (a liveness probe)
//   GET /readyz    200 when the source is connected, the sink has not failed and the lag is within
//                  http.ready_max_lag_ms; 503 with the reasons otherwise (a readiness probe)
//   GET /status    JSON: what `tidemark status` prints, live
// The handlers run on the endpoint threads, so everything they call must be thread-safe.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace tidemark {

struct HttpHandlers {
  std::function<std::string()> metrics;
  std::function<bool()> alive;
  std::function<std::vector<std::string>()> not_ready;  // why the pipeline is not ready; empty: ready
  std::function<nlohmann::json()> status;
};

class HttpEndpoints {
 public:
  explicit HttpEndpoints(HttpHandlers handlers);
  ~HttpEndpoints();
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;

  // Serves on `address` (host:port), replacing an earlier address; empty stops serving. The error names
  // the address and the setting when the port cannot be bound.
  std::optional<std::string> listen(const std::string& address);
  const std::string& address() const { return address_; }

 private:
  void stop();

  HttpHandlers handlers_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string address_;
};

// GET `path` from the endpoints at `address` (a client's view: `tidemark status --live`). The body on a 2xx
// answer; otherwise the error, naming the address and http.listen.
struct EndpointAnswer {
  bool ok = false;
  int status = 0;
  std::string body;   // when ok
  std::string error;  // when not
};
EndpointAnswer get_endpoint(const std::string& address, const std::string& path);

}  // namespace tidemark
