// ladder_check_trace FILE: loads a trace file and runs testing::check_trace (trace_checker.h) on it, for the ctests
// that run a chapter end to end. Exit 0 when it passes, 1 with one line per problem, 2 when the file cannot be read.
#include <fstream>
#include <iostream>
#include <string>

#include "trace/tests/trace_checker.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ladder_check_trace FILE\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": not a JSON trace: " << e.what() << "\n";
    return 2;
  }
  const std::vector<std::string> problems = ladder::testing::check_trace(doc);
  for (const std::string& p : problems) std::cout << argv[1] << ": " << p << "\n";
  if (!problems.empty()) return 1;
  std::cout << argv[1] << ": passes the trace checker (" << doc["traceEvents"].size() << " events)\n";
  return 0;
}
