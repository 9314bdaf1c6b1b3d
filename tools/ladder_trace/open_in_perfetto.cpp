// See open_in_perfetto.h. A tiny HTTP/1.1 server on POSIX sockets: it must answer exactly one kind of request, so a
// library would be more code to trust than the few lines here. What it guards against, because it listens on a socket
// any local program or web page can reach: only a request whose Origin is the Perfetto UI gets the file (a plain curl
// or another site's page gets 403 and does not use up the serving), only a Host of 127.0.0.1 or localhost is answered
// (a page that rebinds its own name to 127.0.0.1 is refused), a request larger than kMaxRequest is refused, a client
// that sends nothing for kRequestTimeout is dropped, every client has a deadline for taking the answer (the sends never
// block: a client reading a few bytes at a time is dropped at its deadline), and at most kMaxClients connections are
// held at once (browsers open spare connections that never send anything). None of them can keep the file from being
// served to the next client, and Ctrl-C ends it at any time (SIGINT keeps its default action).
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
#include <array>
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
// The time a client has to take the whole file: 10 s, and 1 s more per 100 MB (the loopback moves GB/s).
constexpr auto kSendTimeout = std::chrono::seconds(10);
constexpr int64_t kSendBytesPerSecond = 100'000'000;
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

// "%3D" -> "=": the Perfetto UI decodes its url= before it fetches, so a file named "bs=64+fused.json" is asked for
// as /bs=64+fused.json, not as the link's /bs%3D64%2Bfused.json. Both name the file.
std::string percent_decoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
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

// Sends n bytes on the non-blocking socket fd, waiting for room until `deadline`; false when the client left or
// did not take them in time.
bool send_all(int fd, const char* p, size_t n, Clock::time_point deadline) {
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (ms <= 0) return false;
      pollfd out{fd, POLLOUT, 0};
      if (poll(&out, 1, static_cast<int>(std::min<int64_t>(ms, 1000))) < 0 && errno != EINTR) return false;
      continue;
    }
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

void answer(int fd, const char* status, const std::string& extra = "") {
  const std::string r = fmt::format(
      "HTTP/1.1 {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: {}\r\n"
      "{}Connection: close\r\n\r\n{}\n",
      status, std::strlen(status) + 1, kOrigin, extra, status);
  send_all(fd, r.data(), r.size(), Clock::now() + kRequestTimeout);
}

// Sends the whole file, as application/gzip when it is gzip (the UI inflates it) and application/json otherwise;
// true only if every byte went out before the client's deadline.
bool send_file(int fd, const std::string& file) {
  const int in = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (in < 0 || fstat(in, &st) != 0) {
    if (in >= 0) close(in);
    answer(fd, "404 Not Found");
    return false;
  }
  std::array<unsigned char, 2> magic{};
  const bool gzip = pread(in, magic.data(), magic.size(), 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const auto deadline = Clock::now() + kSendTimeout + std::chrono::seconds(st.st_size / kSendBytesPerSecond);
  const std::string head = fmt::format(
      "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: {}\r\n"
      "Cache-Control: no-cache\r\nConnection: close\r\n\r\n",
      gzip ? "application/gzip" : "application/json", st.st_size, kOrigin);
  bool ok = send_all(fd, head.data(), head.size(), deadline);
  std::vector<char> buf(size_t{1} << 20);
  int64_t left = st.st_size;
  while (ok && left > 0) {
    const ssize_t r = read(in, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    ok = send_all(fd, buf.data(), static_cast<size_t>(r), deadline);
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

// The value of header `name` (lower case) in a request, trimmed; "" when it has none.
std::string header(const std::string& request, const std::string& name) {
  for (size_t at = request.find("\r\n"); at != std::string::npos; at = request.find("\r\n", at + 2)) {
    const size_t colon = request.find(':', at + 2), end = request.find("\r\n", at + 2);
    if (colon == std::string::npos || colon > end || colon - (at + 2) != name.size()) continue;
    std::string key = request.substr(at + 2, name.size());
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (key != name) continue;
    const size_t from = request.find_first_not_of(" \t", colon + 1);
    const size_t to = request.find_last_not_of(" \t", end - 1);
    return from == std::string::npos || from > to ? "" : request.substr(from, to - from + 1);
  }
  return "";
}

// Handles one complete request; returns true when it was the UI's GET of the file and the file went out whole.
// OPTIONS is the browser's preflight, answered for the UI alone (with Chrome's private-network permission).
bool respond(const Client& c, const std::string& path, const std::string& file, int port) {
  const size_t sp1 = c.request.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? std::string::npos : c.request.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    answer(c.fd, "400 Bad Request");
    return false;
  }
  const std::string method = c.request.substr(0, sp1);
  std::string target = c.request.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const std::string host = header(c.request, "host");
  if (host != fmt::format("127.0.0.1:{}", port) && host != fmt::format("localhost:{}", port)) {
    answer(c.fd, "403 Forbidden");  // another name resolving here: a page rebinding its own name to 127.0.0.1
    return false;
  }
  const bool ui = header(c.request, "origin") == kOrigin;
  if (method == "OPTIONS") {
    if (!ui) {
      answer(c.fd, "403 Forbidden");
      return false;
    }
    const std::string asked = header(c.request, "access-control-request-headers");
    answer(c.fd, "204 No Content",
           fmt::format("Access-Control-Allow-Methods: GET, OPTIONS\r\n{}Access-Control-Allow-Private-Network: true\r\n"
                       "Access-Control-Max-Age: 60\r\n",
                       asked.empty() ? "" : "Access-Control-Allow-Headers: " + asked + "\r\n"));
    return false;
  }
  if (method != "GET" || percent_decoded(target) != percent_decoded(path)) {
    answer(c.fd, "404 Not Found");
    return false;
  }
  if (!ui) {
    answer(c.fd, "403 Forbidden");  // the file is for the Perfetto UI's page, not for any program on this machine
    return false;
  }
  return send_file(c.fd, file);
}

}  // namespace

void open_in_perfetto(const std::string& file, bool open_browser, int port, const std::function<void()>& check) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(fmt::format("no trace file {}", file));
  if (access(file.c_str(), R_OK) != 0) throw Error(fmt::format("cannot read {}: {}", file, std::strerror(errno)));
  if (st.st_size > kUiLimitBytes) {
    throw Error(
        fmt::format("{} is {:.1f} GB, more than the Perfetto UI loads in a browser (about 1 GB): run "
                    "`trace_processor server http {}` and open {}, which uses it",
                    file, st.st_size / 1e9, file, kOrigin));
  }
  if (check) check();
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
            if (!served) served = respond(c, path, file, port);
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
      if (fd >= 0) clients.push_back({fd, {}, Clock::now() + kRequestTimeout});  // non-blocking, reads and sends
    }
  }
  for (const Client& c : clients) close(c.fd);
  close(server);
  fmt::print(stderr, "{} was fetched whole ({} bytes); done\n", file, static_cast<int64_t>(st.st_size));
}

}  // namespace ladder
