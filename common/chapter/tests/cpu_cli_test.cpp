// Option parsing: bad values are one line naming the option and exit code 2; the trace folder is checked up front.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "chapter/cli.h"

using namespace ladder;

namespace {
struct Parsed {
  int rc;
  std::string err;
  int64_t batch;
  CommonOptions common;
};
std::string captured_out;  // stdout of the last parse
Parsed parse(std::vector<const char*> args) {
  Parsed p{};
  p.batch = 1024;
  CLI::App app{"test"};
  app.add_option("--batch", p.batch)->check(int_range(1, kMaxDim));
  add_common_options(app, p.common);
  args.insert(args.begin(), "chapter");
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  p.rc = parse_options(app, static_cast<int>(args.size()), args.data());
  captured_out = testing::internal::GetCapturedStdout();
  p.err = testing::internal::GetCapturedStderr();
  return p;
}
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(Cli, DefaultsAreTheTorchSchedule) {
  const Parsed p = parse({});
  EXPECT_EQ(p.rc, -1);
  EXPECT_EQ(p.common.schedule.wait, 1);
  EXPECT_EQ(p.common.schedule.warmup, 1);
  EXPECT_EQ(p.common.schedule.active, 3);
  EXPECT_EQ(p.common.trace_dir, "traces");
}

TEST(Cli, GoodValuesParse) {
  const Parsed p = parse({"--batch", "7", "--wait", "0", "--warmup", "2", "--active", "5", "--seed", "42"});
  EXPECT_EQ(p.rc, -1) << p.err;
  EXPECT_EQ(p.batch, 7);
  EXPECT_EQ(p.common.schedule.total_steps(), 7);
  EXPECT_EQ(p.common.seed, 42u);
}

TEST(Cli, BadValuesAreOneLineNamingTheOption) {
  for (auto [args, option] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"--batch", "0"}, "--batch"},
           {{"--batch", "-3"}, "--batch"},
           {{"--batch", "x"}, "--batch"},
           {{"--active", "0"}, "--active"},
           {{"--wait", "-1"}, "--wait"},
           {{"--seed", "abc"}, "--seed"},
           {{"--no-such-option"}, "--no-such-option"},
       }) {
    const Parsed p = parse(args);
    EXPECT_EQ(p.rc, 2) << option;
    EXPECT_EQ(lines(p.err), 1) << p.err;
    EXPECT_NE(p.err.find(option), std::string::npos) << p.err;
    EXPECT_EQ(p.err.rfind("error: ", 0), 0u) << p.err;
  }
}

TEST(Cli, HelpExitsZero) {
  const Parsed p = parse({"--help"});
  EXPECT_EQ(p.rc, 0);
  EXPECT_NE(captured_out.find("--trace-dir"), std::string::npos);
}

TEST(Cli, HelpAfterABadOptionPrintsTheHelp) {
  for (auto args : std::vector<std::vector<const char*>>{{"--batch", "0", "--help"}, {"--nope", "-h"}}) {
    const Parsed p = parse(args);
    EXPECT_EQ(p.rc, 0) << p.err;
    EXPECT_NE(captured_out.find("--trace-dir"), std::string::npos) << captured_out;
    EXPECT_EQ(p.err, "");
  }
}

TEST(Cli, RangeMessagesAreExactAndShort) {
  for (auto [args, want] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"--batch", "1e9"}, "error: --batch: must be an integer from 1 to 2147483647, got 1e9\n"},
           {{"--batch", "2147483648"}, "error: --batch: must be an integer from 1 to 2147483647, got 2147483648\n"},
           {{"--batch", "99999999999999999999"},
            "error: --batch: must be an integer from 1 to 2147483647, got 99999999999999999999\n"},
           {{"--wait", "-1"}, "error: --wait: must be an integer from 0 to 1000, got -1\n"},
           {{"--active", "1001"}, "error: --active: must be an integer from 1 to 1000, got 1001\n"},
       }) {
    const Parsed p = parse(args);
    EXPECT_EQ(p.rc, 2);
    EXPECT_EQ(p.err, want);
  }
  const Parsed ok = parse({"--batch", "2147483647"});
  EXPECT_EQ(ok.rc, -1) << ok.err;
  EXPECT_EQ(ok.batch, 2147483647);
}

TEST(Cli, SeedIsAnyUnsigned64BitNumberAndNeverNegative) {
  const Parsed p = parse({"--seed", "18446744073709551615"});
  EXPECT_EQ(p.rc, -1) << p.err;
  EXPECT_EQ(p.common.seed, 18446744073709551615ull);
  for (const char* bad : {"-1", "18446744073709551616", "1.5"}) {
    const Parsed q = parse({"--seed", bad});
    EXPECT_EQ(q.rc, 2) << bad;
    EXPECT_EQ(q.err,
              std::string("error: --seed: must be an integer from 0 to 18446744073709551615, got ") + bad + "\n");
  }
}

TEST(Cli, CheckTraceDirCreatesNothing) {
  const auto dir = std::filesystem::temp_directory_path() / "ladder-cli-check" / "a" / "b";
  std::filesystem::remove_all(dir.parent_path().parent_path());
  EXPECT_NO_THROW(check_trace_dir(dir.string()));
  EXPECT_FALSE(std::filesystem::exists(dir.parent_path().parent_path()));
  EXPECT_THROW(check_trace_dir("/dev/null/traces"), UsageError);
}

TEST(Cli, TraceDirIsCreatedAndProbed) {
  const auto dir = std::filesystem::temp_directory_path() / "ladder-cli-test" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  EXPECT_NO_THROW(ensure_writable_dir(dir.string()));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // the probe file is gone again
  std::filesystem::remove_all(dir.parent_path());
}

TEST(Cli, UnusableTraceDirIsAUsageError) {
  // A folder under a regular file cannot exist, even for root (CI runs as root, so chmod would not do).
  const auto file = std::filesystem::temp_directory_path() / "ladder-cli-test-file";
  std::ofstream(file) << "x";
  try {
    ensure_writable_dir((file / "traces").string());
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.exit_code, 2);
    EXPECT_NE(std::string(e.what()).find("--trace-dir"), std::string::npos);
  }
  std::filesystem::remove(file);
}
