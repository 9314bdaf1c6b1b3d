// Option parsing: bad values are one line naming the option and exit code 2; the trace folder is checked up front.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gpu/check.h"
#include "chapter/cli.h"

using namespace ladder;

namespace {
struct Parsed {
  int rc;
  std::string err;
  int64_t batch;
  CommonOptions common;
};
Parsed parse(std::vector<const char*> args) {
  Parsed p{};
  p.batch = 1024;
  CLI::App app{"test"};
  app.add_option("--batch", p.batch)->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  add_common_options(app, p.common);
  args.insert(args.begin(), "chapter");
  testing::internal::CaptureStderr();
  p.rc = parse_options(app, static_cast<int>(args.size()), args.data());
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
  testing::internal::CaptureStdout();
  const Parsed p = parse({"--help"});
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(p.rc, 0);
  EXPECT_NE(out.find("--trace-dir"), std::string::npos);
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
