// Where a trace's bytes come from: a file, gzip or not (told by its first two bytes, 1f 8b, as Perfetto and HTA tell
// it, not by its name), or standard input for "-". The JSON reader (json_read.h) reads them through here.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "trace/model/json_tokenizer.h"

namespace ladder {

// The most bytes of JSON text one trace may hold, after gzip. The reader streams the text, so memory is the events,
// which take about as much as their text: past this, a gzip of a few megabytes ("a zip bomb") or a runaway file would
// take the machine's memory. 8 GiB by default; ladder-trace's --max-json changes it.
inline constexpr uint64_t kDefaultMaxJsonBytes = uint64_t{8} << 30;

// An open trace: the bytes as a json::Source, and what the reader may reserve for them.
class TraceInput {
 public:
  // Opens `path` ("-": standard input). Throws TraceError, one line naming the file, when it cannot be read.
  TraceInput(const std::string& path, uint64_t max_json_bytes = kDefaultMaxJsonBytes);
  ~TraceInput();
  TraceInput(const TraceInput&) = delete;
  TraceInput& operator=(const TraceInput&) = delete;

  json::Source& source() { return *source_; }
  bool gzip() const { return gzip_; }
  // The JSON text's size when it can be known before reading (a plain file; a gzip's trailer); 0 when not.
  uint64_t expected_bytes() const { return expected_; }
  // Throws TraceError if the bytes ended early (a truncated gzip) or could not be read: call after the reader is done.
  void finish();

 private:
  size_t read(char* buf, size_t n);
  struct Gz;
  std::string path_;
  std::FILE* file_ = nullptr;
  bool close_ = false;
  bool gzip_ = false;
  uint64_t max_ = 0, taken_ = 0, expected_ = 0;
  std::unique_ptr<Gz> gz_;
  std::unique_ptr<json::Source> source_;
};

}  // namespace ladder
