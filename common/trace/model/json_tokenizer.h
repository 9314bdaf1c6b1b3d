// A streaming JSON tokenizer (RFC 8259, UTF-8 checked) for trace files, which can be a gigabyte.
//
// Why not json::parse: a DOM of a trace takes ~8x the file's size in memory and a nested value is freed and printed
// recursively (75,000 nested brackets in a 150 KB file overflowed the stack). So this walks the text once, hands
// each value to its caller as it comes (json_read.cpp builds an Event straight from its object, one event's fields
// in memory at a time), and skips what the caller does not need without recursion. It still checks the whole text
// is JSON, so a broken file fails here, with the file name and the byte offset. The hot paths (peek, whitespace,
// the byte loops of strings and numbers) are inline: they run once per byte of the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ladder::json {

// The text: a buffer that a file refills chunk by chunk, or all of a string_view at once.
class Source {
 public:
  explicit Source(std::string_view text) : start_(text.data()), p_(start_), end_(start_ + text.size()) {}
  explicit Source(std::FILE* f) : file_(f), buf_(new char[kChunk]) { start_ = p_ = end_ = buf_.get(); }
  // Bytes from a function that fills up to n bytes of its buffer and returns how many (0 at the end): a gzip stream.
  using ReadFn = std::function<size_t(char* buf, size_t n)>;
  explicit Source(ReadFn read) : read_(std::move(read)), buf_(new char[kChunk]) { start_ = p_ = end_ = buf_.get(); }

  // The next byte, or -1 at the end of the text.
  int peek() { return p_ < end_ || refill() ? static_cast<unsigned char>(*p_) : -1; }
  int next() {
    const int c = peek();
    if (c >= 0) {
      ++p_;
      if (raw_) raw_->push_back(static_cast<char>(c));
    }
    return c;
  }
  void drop() { ++p_; }  // steps over the byte peek() returned, without recording it
  // Appends to `out` the bytes for which keep(byte) holds, up to the first that does not (the fast path of strings
  // and numbers: one tight loop instead of a call per byte).
  template <typename Keep>
  void take_while(Keep keep, std::string& out) {
    while (p_ < end_ || refill()) {
      const char* q = p_;
      while (q < end_ && keep(static_cast<unsigned char>(*q))) ++q;
      out.append(p_, static_cast<size_t>(q - p_));
      if (raw_) raw_->append(p_, static_cast<size_t>(q - p_));
      const bool stopped = q < end_;
      p_ = q;
      if (stopped) return;
    }
  }
  size_t offset() const { return consumed_ + static_cast<size_t>(p_ - start_); }
  // Where offset() is as a text editor counts: line and column, both from 1 (column in bytes). Newlines are counted a
  // chunk at a time as chunks are dropped, so the error message can say where without a second pass over the file.
  size_t line() const;
  size_t column() const;
  // While set, every byte taken is also appended here (whitespace between tokens is not): a metadata value's text.
  void record(std::string* raw) { raw_ = raw; }

 private:
  static constexpr size_t kChunk = 1 << 20;
  bool refill();  // the next chunk of the file; false at its end (or always, for text in memory)
  const char* start_;
  const char* p_;
  const char* end_;
  std::FILE* file_ = nullptr;
  ReadFn read_;
  std::unique_ptr<char[]> buf_;
  size_t consumed_ = 0;  // bytes of the file before the buffer
  size_t lines_before_ = 0;    // newlines in those bytes
  size_t line_start_ = 0;      // offset of the byte after the last of them
  std::string* raw_ = nullptr;
};

// A scalar as the event model needs it: which kind of JSON value it was and, for a number, its value and its text
// (the text goes into error messages: "ts" 1e+308 is out of range).
struct Num {
  enum Kind { None, Int, Float, String, Other } kind = None;
  int64_t i = 0;
  double d = 0;
  std::string text;
  bool is_number() const { return kind == Int || kind == Float; }
};

// Reads JSON tokens from a Source; every syntax error throws TraceError "trace NAME is not valid JSON: WHAT at byte
// N (found X)". object() and array() call back per member/element, which must consume its value.
class Tokenizer {
 public:
  Tokenizer(Source& in, const std::string& name) : in_(in), name_(name) {}

  void ws() {
    for (int c = in_.peek(); c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = in_.peek()) in_.drop();
  }
  void expect(char ch, const char* what) {
    ws();
    if (in_.peek() != ch) fail_syntax(what);
    in_.next();
  }

  // A string token into `out` (cleared first): escapes decoded, UTF-8 checked.
  void string(std::string& out);
  // A number token into n: Int when it has no fraction or exponent and fits int64.
  void number(Num& n);
  // Steps over one value of any shape, checking it. No recursion: 100,000 nested brackets cost 100 KB of heap.
  void skip();
  // A value read as a Num: numbers and strings keep their kind, anything else is skipped and becomes Other.
  void scalar(Num& n);
  // A string value into `out`; false (and the value skipped) when it is not a string.
  bool string_value(std::string& out);
  [[noreturn]] void fail_syntax(const std::string& what);

  // Calls member(key) for each member of an object; the member must consume its value. Returns false (value skipped)
  // when the value is not an object.
  template <typename F>
  bool object(F&& member) {
    ws();
    if (in_.peek() != '{') {
      skip();
      return false;
    }
    in_.next();
    ws();
    if (in_.peek() == '}') {
      in_.next();
      return true;
    }
    std::string key;
    for (;;) {
      ws();
      if (in_.peek() != '"') fail_syntax("expected a key string");
      string(key);
      expect(':', "expected ':'");
      member(key);
      ws();
      const int c = in_.next();
      if (c == '}') return true;
      if (c != ',') fail_syntax("expected ',' or '}'");
    }
  }
  // Calls item(index) for each element of an array (the item consumes it). False (value skipped) when not an array.
  template <typename F>
  bool array(F&& item) {
    ws();
    if (in_.peek() != '[') {
      skip();
      return false;
    }
    in_.next();
    ws();
    if (in_.peek() == ']') {
      in_.next();
      return true;
    }
    for (size_t i = 0;; ++i) {
      item(i);
      ws();
      const int c = in_.next();
      if (c == ']') return true;
      if (c != ',') fail_syntax("expected ',' or ']'");
    }
  }

 protected:
  Source& in_;
  const std::string& name_;

 private:
  void escape(std::string& out);
  uint32_t hex4();
  void utf8_tail(int c, std::string& out);
  void literal(const char* word);
  void member_key();
  void scalar_skip();
  std::string scratch_;
  Num scratch_num_;
};

// True when `text` is exactly one JSON value, whitespace around it allowed: what a metadata value must be.
bool is_one_json_value(std::string_view text);

}  // namespace ladder::json
