// See open_in_perfetto.h. A tiny HTTP/1.1 server on POSIX sockets: it must answer exactly one kind of request, so a
// library would be more code to trust than the few lines here. What it guards against, because it listens on a socket
// any local program can reach: a request larger than kMaxRequest is refused, a client that sends nothing for
// kRequestTimeout is dropped, a client that stops reading the file for kSendTimeout is dropped, and at most kMaxClients
// connections are held at once (browsers open spare connections that never send anything). None of them can keep the
// file from being served to the next client, and Ctrl-C ends it at any time (SIGINT keeps its default action).
#include "open_in_perfetto.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

extern char** environ;

namespace ladder {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxRequest = 16 * 1024;  // a browser's GET with its headers is under 2 KB
constexpr auto kRequestTimeout = std::chrono::seconds(10);
constexpr int kSendTimeoutS = 30;
constexpr size_t kMaxClients = 16;
// The Perfetto UI parses a trace inside the browser's WebAssembly memory; past about 1 GB of JSON it runs out. Such a
// trace opens through a native trace processor instead (the UI finds one on 127.0.0.1:9001 by itself).
constexpr int64_t kUiLimitBytes = int64_t{1} << 30;
constexpr const char* kOrigin = "https://ui.perfetto.dev";

// The file's name as it goes into the URL: everything but unreserved characters percent-encoded, so the link is one
// word a terminal can click and a shell can pass on unquoted.
std::string url_name(const std::string& file) {
  const size_t slash = file.find_last_of('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  std::string out;
  for (const unsigned char c : base) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string size_text(int64_t bytes) {
  if (bytes >= 1000000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.1f} KB", bytes / 1e3);
}

bool ssh_session() {
  for (const char* v : {"SSH_CONNECTION", "SSH_CLIENT"}) {
    const char* s = std::getenv(v);
    if (s && *s) return true;
  }
  return false;
}

// Starts `program url` with its output thrown away and does not wait for it: a browser that is already running
// returns at once, one that is not keeps running after we exit. Returns false when it could not be started.
bool spawn(const std::string& program, const std::string& url) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), const_cast<char*>(url.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0;
}

// $BROWSER (its first entry: the variable may hold a colon-separated list), else xdg-open where there is a display.
// A missing browser is no error: the link is on the first line for the reader to open.
void open_browser_on(const std::string& url) {
  std::signal(SIGCHLD, SIG_IGN);  // the browser's launcher is never waited for: let the kernel reap it
  const char* browser = std::getenv("BROWSER");
  if (browser && *browser) {
    std::string first = browser;
    first = first.substr(0, first.find(':'));
    if (!first.empty() && spawn(first, url)) return;
  }
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if (((display && *display) || (wayland && *wayland)) && spawn("xdg-open", url)) return;
  fmt::print(stderr, "no browser found here ($BROWSER unset, no xdg-open with a display): open the link above\n");
}

int listen_on(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(fmt::format("cannot open a socket: {}", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // a previous run's closed connections do not block us
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // 127.0.0.1 only: nothing off this machine can fetch the trace
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 16) != 0) {
    const int err = errno;
    close(fd);
    if (err == EADDRINUSE) {
      throw Error(
          fmt::format("port {} on 127.0.0.1 is taken (a trace_processor --httpd, or another ladder-trace "
                      "open?): stop it first; the Perfetto UI fetches from this port only",
                      port));
    }
    throw Error(fmt::format("cannot listen on 127.0.0.1:{}: {}", port, std::strerror(err)));
  }
  return fd;
}

bool send_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;  // the client left, or stopped reading for kSendTimeoutS
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void answer(int fd, const char* status) {
  const std::string r = fmt::format(
      "HTTP/1.1 {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: {}\r\n"
      "Connection: close\r\n\r\n{}\n",
      status, std::strlen(status) + 1, kOrigin, status);
  send_all(fd, r.data(), r.size());
}

// Sends the whole file; true only if every byte went out.
bool send_file(int fd, const std::string& file) {
  const int in = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || fstat(in, &st) != 0) {
    if (in >= 0) close(in);
    answer(fd, "404 Not Found");
    return false;
  }
  const std::string head = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: {}\r\n"
      "Cache-Control: no-cache\r\nConnection: close\r\n\r\n",
      st.st_size, kOrigin);
  bool ok = send_all(fd, head.data(), head.size());
  std::vector<char> buf(size_t{1} << 20);
  int64_t left = st.st_size;
  while (ok && left > 0) {
    const ssize_t r = read(in, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ok = send_all(fd, buf.data(), static_cast<size_t>(r));
    left -= r;
  }
  close(in);
  return ok && left == 0;
}

struct Client {
  int fd;
  std::string request;
  Clock::time_point deadline;
};

// Handles one complete request; returns true when it was the GET of the file and the file went out whole.
bool respond(const Client& c, const std::string& path, const std::string& file) {
  fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);  // from here on each send waits, up to kSendTimeoutS
  const size_t sp1 = c.request.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? std::string::npos : c.request.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    answer(c.fd, "400 Bad Request");
    return false;
  }
  const std::string method = c.request.substr(0, sp1);
  std::string target = c.request.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (method == "GET" && target == path) return send_file(c.fd, file);
  answer(c.fd, "404 Not Found");
  return false;
}

}  // namespace

void open_in_perfetto(const std::string& file, bool open_browser, int port) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(fmt::format("no trace file {}", file));
  if (access(file.c_str(), R_OK) != 0) throw Error(fmt::format("cannot read {}: {}", file, std::strerror(errno)));
  if (st.st_size > kUiLimitBytes) {
    throw Error(
        fmt::format("{} is {:.1f} GB, more than the Perfetto UI loads in a browser (about 1 GB): run "
                    "`trace_processor server http {}` and open {}, which uses it",
                    file, st.st_size / 1e9, file, kOrigin));
  }
  const int server = listen_on(port);
  const std::string path = "/" + url_name(file);
  const std::string url = fmt::format("{}/#!/?url=http://127.0.0.1:{}{}", kOrigin, port, path);
  fmt::print("{}\n", url);
  std::fflush(stdout);
  if (ssh_session()) {
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    fmt::print(stderr,
               "this is an ssh session: the browser runs on your own machine, so first run there `ssh -L "
               "9001:localhost:9001 {}`, then open the link\n",
               host);
  } else if (open_browser) {
    open_browser_on(url);
  }
  // Chrome 142 and later ask before a web page may reach 127.0.0.1, and fetch nothing when refused.
  fmt::print(stderr,
             "serving {} ({}) once on 127.0.0.1:{} until the Perfetto UI fetches it (Chrome asks first whether the "
             "page may reach this machine: allow it; Ctrl-C stops)\n",
             file, size_text(st.st_size), port);

  std::vector<Client> clients;
  for (bool served = false; !served;) {
    // Wait for a new connection, a request's bytes, or the nearest deadline.
    std::vector<pollfd> fds = {{server, static_cast<short>(clients.size() < kMaxClients ? POLLIN : 0), 0}};
    int timeout_ms = -1;
    const auto now = Clock::now();
    for (const Client& c : clients) {
      fds.push_back({c.fd, POLLIN, 0});
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count();
      timeout_ms = static_cast<int>(timeout_ms < 0 ? std::max<int64_t>(ms, 0) : std::min<int64_t>(timeout_ms, ms));
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      throw Error(fmt::format("poll: {}", std::strerror(errno)));
    }
    std::vector<Client> still;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = clients[i];
      bool done = false;
      if (fds[i + 1].revents) {
        char buf[4096];
        const ssize_t r = recv(c.fd, buf, sizeof buf, 0);
        if (r <= 0) {
          done = !(r < 0 && (errno == EINTR || errno == EAGAIN));
        } else {
          c.request.append(buf, static_cast<size_t>(r));
          if (c.request.find("\r\n\r\n") != std::string::npos) {
            if (!served) served = respond(c, path, file);
            done = true;
          } else if (c.request.size() > kMaxRequest) {
            answer(c.fd, "431 Request Header Fields Too Large");
            done = true;
          }
        }
      }
      if (!done && Clock::now() >= c.deadline) done = true;  // sent nothing whole in time: drop it
      if (done) {
        close(c.fd);
      } else {
        still.push_back(std::move(c));
      }
    }
    clients = std::move(still);
    if (!served && (fds[0].revents & POLLIN)) {
      const int fd = accept4(server, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        // Reading stays non-blocking (poll above); the file is sent blocking, dropped after kSendTimeoutS of no
        // progress.
        const timeval tv{kSendTimeoutS, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        clients.push_back({fd, {}, Clock::now() + kRequestTimeout});
      }
    }
  }
  for (const Client& c : clients) close(c.fd);
  close(server);
  fmt::print(stderr, "{} was fetched whole ({} bytes); done\n", file, static_cast<int64_t>(st.st_size));
}

}  // namespace ladder
