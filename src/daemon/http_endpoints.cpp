#include "daemon/http_endpoints.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "core/thread_name.hpp"

namespace tidemark {

namespace {

constexpr size_t kServerThreads = 2;  // scrapes and probes are few; bounded either way

// "127.0.0.1:9464" -> ("127.0.0.1", 9464); "[::1]:9464" -> ("::1", 9464). The settings table has
// checked the form.
std::pair<std::string, int> split_address(const std::string& address) {
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return {host, std::stoi(address.substr(colon + 1))};
}

}  // namespace

HttpEndpoints::HttpEndpoints(HttpHandlers handlers) : handlers_(std::move(handlers)) {}

HttpEndpoints::~HttpEndpoints() { stop(); }

void HttpEndpoints::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  address_.clear();
}

std::optional<std::string> HttpEndpoints::listen(const std::string& address) {
  if (address == address_ && (server_ || address.empty())) return std::nullopt;
  stop();
  if (address.empty()) return std::nullopt;

  auto server = std::make_unique<httplib::Server>();
  server->new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let two daemons share a port
  // without an error.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const HttpHandlers& h = handlers_;
  server->Get("/metrics", [&h](const httplib::Request&, httplib::Response& res) {
    res.set_content(h.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server->Get("/healthz", [&h](const httplib::Request&, httplib::Response& res) {
    const bool alive = h.alive();
    res.status = alive ? 200 : 503;
    res.set_content(alive ? "alive\n" : "not alive: the publisher has not made progress\n", "text/plain");
  });
  server->Get("/readyz", [&h](const httplib::Request&, httplib::Response& res) {
    const std::vector<std::string> reasons = h.not_ready();
    res.status = reasons.empty() ? 200 : 503;
    const nlohmann::json body = {{"ready", reasons.empty()}, {"reasons", reasons}};
    res.set_content(body.dump() + "\n", "application/json");
  });
  server->Get("/status", [&h](const httplib::Request&, httplib::Response& res) {
    res.set_content(h.status().dump(2) + "\n", "application/json");
  });

  const auto [host, port] = split_address(address);
  if (!server->bind_to_port(host, port))
    return "cannot listen on " + address + " (http.listen): the port is in use or the address is not this machine's";
  server_ = std::move(server);
  address_ = address;
  thread_ = std::thread([s = server_.get()] {
    name_this_thread("tm-http");
    s->listen_after_bind();
  });
  spdlog::info("serving /metrics, /healthz, /readyz and /status on http://{}", address);
  return std::nullopt;
}

EndpointAnswer get_endpoint(const std::string& address, const std::string& path) {
  EndpointAnswer answer;
  if (address.empty()) {
    answer.error = "http.listen is not set, so the daemon serves no endpoints; set it (e.g. 127.0.0.1:9464) and "
                   "reload the daemon (systemctl reload tidemark)";
    return answer;
  }
  const auto [host, port] = split_address(address);
  httplib::Client client(host, port);
  client.set_connection_timeout(5);
  client.set_read_timeout(10);
  const httplib::Result result = client.Get(path);
  if (!result) {
    answer.error = "no answer from http://" + address + path + " (" + httplib::to_string(result.error()) +
                   "): is the daemon running with http.listen " + address + "?";
    return answer;
  }
  answer.status = result->status;
  answer.ok = result->status >= 200 && result->status < 300;
  if (answer.ok) answer.body = result->body;
  else answer.error = "http://" + address + path + " answered " + std::to_string(result->status) + ": " + result->body;
  return answer;
}

}  // namespace tidemark
