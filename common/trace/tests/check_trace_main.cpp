// ladder_check_trace FILE [--graph]: loads a trace file and runs testing::check_trace (trace_checker.h) on it, for the
// ctests that run a chapter end to end. Exit 0 when it passes, 1 with one line per problem, 2 when the file cannot be
// read. --graph: the trace replays a CUDA graph (the checker's allowance for graph kernels' timestamps).
#include <fstream>
#include <iostream>
#include <string>

#include "trace/tests/trace_checker.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::string(argv[2]) != "--graph")) {
    std::cerr << "usage: ladder_check_trace FILE [--graph]\n";
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
  ladder::testing::CheckOptions opt;
  if (argc == 3) opt.gpu_overlap_ns = 50;  // as cpu_reference_traces_test.cpp allows for the committed _graph traces
  const std::vector<std::string> problems = ladder::testing::check_trace(doc, opt);
  for (const std::string& p : problems) std::cout << argv[1] << ": " << p << "\n";
  if (!problems.empty()) return 1;
  std::cout << argv[1] << ": passes the trace checker (" << doc["traceEvents"].size() << " events)\n";
  return 0;
}
