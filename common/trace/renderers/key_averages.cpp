// See key_averages.h: the layout of key_averages' rows, torch's _build_table, or records for CSV/JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "trace/renderers/key_averages.h"
#include "trace/renderers/table_records.h"
#include "trace/text/text.h"

namespace ladder {

namespace {

// num / den rounded to the nearest integer, halves away from zero.
int64_t div_round(int64_t num, int64_t den) {
  const bool neg = (num < 0) != (den < 0);
  const int64_t a = num < 0 ? -num : num, b = den < 0 ? -den : den;
  const int64_t q = (a + b / 2) / b;
  return neg ? -q : q;
}

// q / 1000 with exactly three decimals ("12.345").
std::string thousandths(int64_t q) {
  const char* sign = q < 0 ? "-" : "";
  if (q < 0) q = -q;
  return fmt::format("{}{}.{:03d}", sign, q / 1000, static_cast<int>(q % 1000));
}

// torch's _format_time ("1.234s", "1.234ms", "1.234us") of (num / den) nanoseconds. The rounding is done exactly on
// integers: through doubles, an average such as 19930 ns / 4 calls = 4.9825 us would round down or up depending on
// float noise.
std::string format_time(int64_t num_ns, int64_t den = 1) {
  if (num_ns >= den * 1000000000) return thousandths(div_round(num_ns, den * 1000000)) + "s";
  if (num_ns >= den * 1000000) return thousandths(div_round(num_ns, den * 1000)) + "ms";
  return thousandths(div_round(num_ns, den)) + "us";
}

// torch's _format_time of a float: Python's "{:.3f}" rounds the double as it is, which fmt's does too.
std::string format_time_us(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

// An average cell: torch's float quotient where the rows carry torch's float sums, else the exact one.
std::string format_average(const KeyAverages& t, int64_t total_ns, double torch_total_us, int64_t calls) {
  if (t.torch_floats && calls > 0) return format_time_us(torch_total_us / static_cast<double>(calls));
  return format_time(total_ns, calls);
}

// torch's _format_time_share: a percentage with two decimals, "NaN" when there is nothing to share.
std::string format_share(int64_t part_ns, int64_t total_ns) {
  if (total_ns == 0) return "NaN";
  if (part_ns > INT64_MAX / 10000 || part_ns < -INT64_MAX / 10000) {  // past 10 days: exact hundredths would overflow
    return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part_ns) / static_cast<double>(total_ns));
  }
  const int64_t q = div_round(part_ns * 10000, total_ns);  // hundredths of a percent
  const char* sign = q < 0 ? "-" : "";
  const int64_t a = q < 0 ? -q : q;
  return fmt::format("{}{}.{:02d}%", sign, a / 100, static_cast<int>(a % 100));
}

// torch's _format_memory: binary units, two decimals, plain bytes below 1 KB ("-8 B", "16.02 MB").
std::string format_memory(int64_t b) {
  const double kb = 1024.0, mb = kb * 1024, gb = mb * 1024;
  const double a = std::abs(static_cast<double>(b));
  if (a >= gb) return fmt::format("{:.2f} GB", static_cast<double>(b) / gb);
  if (a >= mb) return fmt::format("{:.2f} MB", static_cast<double>(b) / mb);
  if (a >= kb) return fmt::format("{:.2f} KB", static_cast<double>(b) / kb);
  return fmt::format("{} B", b);
}

}  // namespace

std::string key_averages_text(const KeyAverages& t, const TableOptions& opt) {
  const bool by_shape = opt.group_by_input_shape;
  // Layout of torch's _build_table: right-aligned cells, two spaces after each, names cut at 52 + "...".
  const size_t kMaxName = static_cast<size_t>(std::max(opt.name_width, 8));
  size_t longest = 0;
  for (const KeyAveragesRow& r : t.rows) longest = std::max(longest, printable(r.name).size());
  const size_t name_w = std::min(longest + 4, kMaxName);
  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (t.device_time) {
    for (const char* h : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) headers.push_back(h);
  }
  if (t.memory) {
    headers.push_back("CPU Mem");
    headers.push_back("Self CPU Mem");
  }
  if (t.memory && t.device_memory) {
    headers.push_back("CUDA Mem");
    headers.push_back("Self CUDA Mem");
  }
  headers.push_back("# of Calls");
  // torch: the shapes column is as wide as its longest cell plus 4, at most 80, and cells are cut to it.
  size_t shapes_w = 0;
  if (by_shape) {
    headers.push_back("Input Shapes");
    for (const KeyAveragesRow& r : t.rows) shapes_w = std::max(shapes_w, r.input_shapes.size() + 4);
    shapes_w = std::min<size_t>(shapes_w, 80);
  }
  const size_t shapes_col = headers.size() - 1;  // the Input Shapes column, when there is one
  if (!t.flops_header.empty()) headers.push_back(t.flops_header);

  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool shapes = by_shape && c == shapes_col;
      out += fmt::format("{:>{}}  ", cells[c], c == 0 ? name_w : shapes ? shapes_w : 12);
    }
    out += "\n";
  };
  std::string rule = std::string(name_w, '-') + "  ";
  for (size_t c = 1; c < headers.size(); ++c) {
    rule += std::string(by_shape && c == shapes_col ? shapes_w : 12, '-') + "  ";
  }
  rule += "\n";

  out += rule;
  line(headers);
  out += rule;
  for (const KeyAveragesRow& r : t.rows) {
    std::string name = printable(r.name);  // a name from the file: control bytes escaped, never sent raw
    if (name.size() >= kMaxName - 3) name = name.substr(0, kMaxName - 3) + "...";
    std::vector<std::string> cells = {name,
                                      format_share(r.self_cpu_ns, t.self_cpu_total_ns),
                                      format_time(r.self_cpu_ns),
                                      r.async ? "0" : format_share(r.cpu_total_ns, t.self_cpu_total_ns),
                                      format_time(r.cpu_total_ns),
                                      format_average(t, r.cpu_total_ns, r.torch_cpu_total_us, r.calls)};
    if (t.device_time) {
      cells.push_back(format_time(r.self_cuda_ns));
      cells.push_back(format_share(r.self_cuda_ns, t.self_cuda_total_ns));
      cells.push_back(format_time(r.cuda_total_ns));
      cells.push_back(format_average(t, r.cuda_total_ns, r.torch_cuda_total_us, r.calls));
    }
    if (t.memory) {
      cells.push_back(format_memory(r.cpu_memory));
      cells.push_back(format_memory(r.self_cpu_memory));
    }
    if (t.memory && t.device_memory) {
      cells.push_back(format_memory(r.cuda_memory));
      cells.push_back(format_memory(r.self_cuda_memory));
    }
    cells.push_back(std::to_string(r.calls));
    if (by_shape) cells.push_back(printable(r.input_shapes).substr(0, shapes_w));
    if (!t.flops_header.empty()) cells.push_back(r.flops > 0 ? fmt::format("{:8.3f}", r.flops * t.flops_scale) : "--");
    line(cells);
  }
  out += rule;
  out += "Self CPU time total: " + format_time(t.self_cpu_total_ns) + "\n";
  if (t.device_time) out += "Self CUDA time total: " + format_time(t.self_cuda_total_ns) + "\n";
  return out;
}

std::string summary_table(const TraceIndex& index, const TableOptions& opt) {
  const KeyAverages table = key_averages(index, opt);
  if (opt.format == OutputFormat::Text) return key_averages_text(table, opt);
  return table_records(key_averages_frame(table, opt.group_by_input_shape), opt.format);
}

std::string summary_table(const Trace& trace, int row_limit) { return summary_table(TraceIndex(trace), row_limit); }

std::string summary_table(const TraceIndex& index, int row_limit) {
  TableOptions o;
  o.row_limit = row_limit;
  return summary_table(index, o);
}

}  // namespace ladder
