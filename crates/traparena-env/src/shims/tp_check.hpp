// TrapArena's C++ check library, force-included into HumanEvalFix test programs by
// tp_build.sh. `TP_CHECK(n, expr)` is check n of the test: it passes when `expr` holds, fails
// when it does not, errs when it throws. `tp::finish()`, the last statement of the test's
// `main`, writes the report (checks run, failed, errored, the outcome of each, and each failed
// check's line and expression) to the
// report descriptor, duplicated under a number of the library's own at start-up and closed
// under its well-known one: output the code under test prints, an early `exit`, an abort or a
// crash never produce a report.
//
// Import probe mode (TRAPARENA_PROBE_FROM=k): checks before index k are passed over, every
// other check writes one JSON line `{"case": i, "ok": ..., "why": ...}` (0-based) as soon as it
// ends, and a check still running after TRAPARENA_PROBE_TIMEOUT_MS ends the program.
#pragma once
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <map>
#include <string>
#include <sys/time.h>
#include <unistd.h>

namespace tp {
struct State {
  int fd = -1;
  bool probe = false;
  long from = 0;
  long timeout_ms = 0;
  std::map<long, int> outcome;  // 0 passed, 1 failed, 2 errored
  std::map<long, std::string> why;  // per failed check: its line, expression and what happened
};

// At most this many failed checks are described in the report, each in at most this many bytes.
constexpr size_t max_listed = 10;
constexpr size_t max_message = 500;

// `s` as the contents of a JSON string: bytes below 0x20, quotes and backslashes escaped, bytes
// outside ASCII shown as `?` (so that the report is valid UTF-8 whatever an exception says).
inline std::string json_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c >= 0x80) {
      out += '?';
    } else if (c < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", c);
      out += u;
    } else {
      out += (char)c;
    }
  }
  return out;
}

inline volatile long current = -1;
inline int probe_fd = -1;

inline State start() {
  State s;
  const char* e = std::getenv("TRAPARENA_REPORT_FD");
  int given = e ? std::atoi(e) : 3;
  s.fd = fcntl(given, F_DUPFD_CLOEXEC, 64);
  if (s.fd >= 0) close(given);
  unsetenv("TRAPARENA_REPORT_FD");
  if (const char* f = std::getenv("TRAPARENA_PROBE_FROM")) {
    s.probe = true;
    s.from = std::atol(f);
    const char* t = std::getenv("TRAPARENA_PROBE_TIMEOUT_MS");
    s.timeout_ms = t ? std::atol(t) : 0;
    probe_fd = s.fd;
  }
  return s;
}
inline State state = start();

inline void on_alarm(int) {
  // Async-signal-safe: a fixed line and _exit.
  char line[96];
  int n = std::snprintf(line, sizeof line, "{\"case\": %ld, \"ok\": false, \"why\": \"timed out\"}\n", current);
  if (probe_fd >= 0 && n > 0) {
    ssize_t w = write(probe_fd, line, (size_t)n);
    (void)w;
  }
  _exit(0);
}

inline void probe_line(long i, bool ok, const char* why) {
  std::string s = "{\"case\": " + std::to_string(i) + ", \"ok\": " + (ok ? "true" : "false") +
                  ", \"why\": \"" + why + "\"}\n";
  ssize_t w = write(state.fd, s.data(), s.size());
  (void)w;
}

template <class F>
void check(long n, F&& f, const char* expr = "", int line = 0) {
  long i = n - 1;
  if (state.probe) {
    if (i < state.from) return;
    current = i;
    if (state.timeout_ms > 0) {
      std::signal(SIGALRM, on_alarm);
      itimerval t{};
      t.it_value.tv_sec = state.timeout_ms / 1000;
      t.it_value.tv_usec = (state.timeout_ms % 1000) * 1000;
      setitimer(ITIMER_REAL, &t, nullptr);
    }
  }
  int result = 0;
  const char* why = "";
  std::string thrown;
  try {
    if (!static_cast<bool>(f())) {
      result = 1;
      why = "the assertion fails";
    }
  } catch (const std::exception& e) {
    result = 2;
    why = "raises an exception";
    thrown = e.what();
  } catch (...) {
    result = 2;
    why = "raises an exception";
  }
  if (state.probe) {
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    probe_line(i, result == 0, why);
  }
  if (result != 0) {
    std::fprintf(stderr, "check %ld %s\n", n, result == 1 ? "failed" : "raised an exception");
  }
  if (result != 0 && state.why.count(n) == 0) {
    std::string m = "line " + std::to_string(line) + ": " + expr +
                    (result == 1 ? " is false" : " raises an exception") +
                    (thrown.empty() ? "" : ": " + thrown);
    if (m.size() > max_message) m = m.substr(0, max_message - 3) + "...";
    state.why[n] = m;
  }
  auto it = state.outcome.find(n);
  if (it == state.outcome.end() || it->second < result) state.outcome[n] = result;
}

inline int finish() {
  std::fflush(stdout);
  std::fflush(stderr);
  long failed = 0, errored = 0;
  std::string outcomes;
  for (auto& [n, r] : state.outcome) {
    failed += r == 1;
    errored += r == 2;
    if (!outcomes.empty()) outcomes += ", ";
    outcomes += "\"check " + std::to_string(n) + "\": \"" +
                (r == 0 ? "passed" : r == 1 ? "failed" : "error") + "\"";
  }
  long run = (long)state.outcome.size();
  std::string failures;
  size_t listed = 0;
  for (auto& [n, r] : state.outcome) {
    if (r == 0 || listed == max_listed) continue;
    listed++;
    if (!failures.empty()) failures += ", ";
    failures += "{\"name\": \"check " + std::to_string(n) + "\", \"message\": \"" +
                json_escape(state.why[n]) + "\"}";
  }
  if (!state.probe && state.fd >= 0) {
    std::string s = "{\"runner\": \"cpp\", \"tests_run\": " + std::to_string(run) +
                    ", \"failed\": " + std::to_string(failed) + ", \"errored\": " +
                    std::to_string(errored) + ", \"skipped\": 0, \"outcomes\": {" + outcomes +
                    "}, \"failures\": [" + failures + "]}";
    ssize_t w = write(state.fd, s.data(), s.size());
    (void)w;
    close(state.fd);
  }
  return failed == 0 && errored == 0 && run > 0 ? 0 : 1;
}
}  // namespace tp

#define TP_CHECK(n, ...) \
  ::tp::check((n), [&]() -> bool { return static_cast<bool>(__VA_ARGS__); }, #__VA_ARGS__, __LINE__)
