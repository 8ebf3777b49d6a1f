#include "serve/request_deadline.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

namespace kiln::serve {

namespace {

// How far past the limit a connection is cut: an inference that waited the limit in its handler
// has this long to write its 503.
constexpr std::chrono::seconds kGrace{1};

// "address:port" of a socket address; "" for one that is not IPv4/IPv6. `port` gets the port.
std::string address_key(const sockaddr_storage& a, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    *port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    *port = ntohs(v6.sin6_port);
  } else {
    return "";
  }
  return std::string(text) + ":" + std::to_string(*port);
}

// The peer of `fd` when it is a connection accepted on local `port`, else "".
std::string peer_of(int fd, int port) {
  sockaddr_storage local{}, peer{};
  socklen_t n = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0) return "";
  int local_port = -1;
  if (address_key(local, &local_port).empty() || local_port != port) return "";
  n = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0) return "";  // the listening socket
  int peer_port = -1;
  return address_key(peer, &peer_port);
}

}  // namespace

RequestDeadlines::RequestDeadlines(int port, int limit_s, Metrics* metrics)
    : port_(port), limit_(limit_s), metrics_(metrics) {
  if (metrics_)
    metrics_->declare("kiln_http_requests_cut_total", Metrics::Type::kCounter,
                      "Connections shut down because a request on them ran past --request-time-limit.");
  thread_ = std::thread([this] { loop(); });
}

RequestDeadlines::~RequestDeadlines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RequestDeadlines::answered(const std::string& remote_addr, int remote_port) {
  std::lock_guard<std::mutex> lock(mu_);
  // (one not seen yet gets its clock at the scan that finds it)
  auto it = connections_.find(remote_addr + ":" + std::to_string(remote_port));
  if (it != connections_.end()) it->second.since = Clock::now();
}

void RequestDeadlines::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(200));
    if (stop_) break;
    lock.unlock();
    scan();
    lock.lock();
  }
}

void RequestDeadlines::scan() {
  // The connections now, outside the lock (a readdir of /proc/self/fd and two syscalls each).
  std::map<std::string, int> now_open;
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (*e->d_name == '\0' || *end != '\0' || fd == own) continue;
      const std::string peer = peer_of(static_cast<int>(fd), port_);
      if (!peer.empty()) now_open[peer] = static_cast<int>(fd);
    }
    closedir(d);
  }
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [peer, c] : connections_) c.seen = false;
  for (const auto& [peer, fd] : now_open) {
    auto [it, fresh] = connections_.try_emplace(peer);
    Connection& c = it->second;
    if (fresh) c.since = now;
    c.fd = fd;
    c.seen = true;
  }
  for (auto it = connections_.begin(); it != connections_.end();) {
    Connection& c = it->second;
    if (!c.seen) {  // closed
      it = connections_.erase(it);
      continue;
    }
    if (c.seen && !c.cut && now - c.since > limit_ + kGrace && peer_of(c.fd, port_) == it->first) {
      shutdown(c.fd, SHUT_RDWR);
      c.cut = true;
      if (metrics_) metrics_->add("kiln_http_requests_cut_total", {});
      std::cerr << "kiln serve: " + it->first + ": a request ran past --request-time-limit (" +
                       std::to_string(limit_.count()) + " s); its connection is shut down\n"
                << std::flush;
    }
    ++it;
  }
}

}  // namespace kiln::serve
