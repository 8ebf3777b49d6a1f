// A time limit on a whole HTTP request, from its first byte to its answer. cpp-httplib limits each
// read and write (--request-timeout), not a request's total: a client that sends its headers or
// body a byte at a time, each within the read timeout, holds a server thread for as long as it
// likes. This watchdog finds the server's connections (the sockets of this process whose local
// port is the server's; /proc/self/fd), starts each one's clock when it first sees it and again
// when the server answers a request on it (httplib's logger: the next request's clock), and shuts
// down (shutdown(2)) a connection whose clock passes the limit (and 1 s of grace, for an
// inference answering 503 at the limit to write its answer): the blocked read fails, httplib
// drops the request and closes the socket. Keep-alive idle time (at most httplib's 5 s) counts
// toward the next request. A handler still running then (an inference past the limit answers 503
// on its own) finds its socket shut when it writes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "serve/metrics.h"

namespace kiln::serve {

class RequestDeadlines {
 public:
  // Watches the connections to local `port`; `metrics` (may be null) counts the ones cut.
  RequestDeadlines(int port, int limit_s, Metrics* metrics);
  ~RequestDeadlines();
  RequestDeadlines(const RequestDeadlines&) = delete;
  RequestDeadlines& operator=(const RequestDeadlines&) = delete;

  // The server answered a request from this peer: its connection's clock starts again.
  void answered(const std::string& remote_addr, int remote_port);

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    Clock::time_point since;
    bool cut = false;
    bool seen = false;  // in this scan
  };
  void loop();
  void scan();

  int port_;
  std::chrono::seconds limit_;
  Metrics* metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<std::string, Connection> connections_;  // by "peer address:port"
  std::thread thread_;
};

}  // namespace kiln::serve
