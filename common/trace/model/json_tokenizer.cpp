// See json_tokenizer.h.
#include "trace/model/json_tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace ladder::json {

bool Source::refill() {
  if (!file_ && !read_) return false;
  const size_t had = static_cast<size_t>(end_ - start_);
  lines_before_ += static_cast<size_t>(std::count(start_, end_, '\n'));
  if (const void* nl = had ? memrchr(start_, '\n', had) : nullptr)
    line_start_ = consumed_ + static_cast<size_t>(static_cast<const char*>(nl) - start_) + 1;
  consumed_ += had;
  const size_t n = file_ ? std::fread(buf_.get(), 1, kChunk, file_) : read_(buf_.get(), kChunk);
  start_ = buf_.get();
  p_ = buf_.get();
  end_ = p_ + n;
  return n > 0;
}

size_t Source::line() const { return lines_before_ + static_cast<size_t>(std::count(start_, p_, '\n')) + 1; }

size_t Source::column() const {
  const size_t here = static_cast<size_t>(p_ - start_);
  const void* nl = here ? memrchr(start_, '\n', here) : nullptr;
  const size_t from = nl ? consumed_ + static_cast<size_t>(static_cast<const char*>(nl) - start_) + 1 : line_start_;
  return offset() - from + 1;
}

void Tokenizer::fail_syntax(const std::string& what) {
  const int c = in_.peek();
  const std::string at = c < 0                   ? "the end"
                         : c >= 0x20 && c < 0x7f ? fmt::format("'{}'", char(c))
                                                 : fmt::format("byte 0x{:02x}", c);
  throw TraceError(
      fmt::format("trace {} is not valid JSON: {} at byte {}, line {}, column {} (found {})", name_, what,
                  in_.offset(), in_.line(), in_.column(), at));
}
// A string token into `out` (cleared first): escapes decoded, UTF-8 checked.
void Tokenizer::string(std::string& out) {
  out.clear();
  if (in_.next() != '"') fail_syntax("expected a string");
  for (;;) {
    in_.take_while([](unsigned char b) { return b >= 0x20 && b != '"' && b != '\\' && b < 0x80; }, out);
    int c = in_.peek();
    if (c == '"') {
      in_.next();
      return;
    }
    if (c < 0x20) fail_syntax(c < 0 ? "unterminated string" : "control character in a string");
    in_.next();
    if (c == '\\') {
      escape(out);
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      utf8_tail(c, out);
    }
  }
}
void Tokenizer::escape(std::string& out) {
  const int c = in_.next();
  switch (c) {
    case '"':
      out.push_back('"');
      return;
    case '\\':
      out.push_back('\\');
      return;
    case '/':
      out.push_back('/');
      return;
    case 'b':
      out.push_back('\b');
      return;
    case 'f':
      out.push_back('\f');
      return;
    case 'n':
      out.push_back('\n');
      return;
    case 'r':
      out.push_back('\r');
      return;
    case 't':
      out.push_back('\t');
      return;
    case 'u':
      break;
    default:
      fail_syntax("invalid escape in a string");
  }
  uint32_t cp = hex4();
  if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate: a low one must follow
    if (in_.next() != '\\' || in_.next() != 'u') fail_syntax("unpaired UTF-16 surrogate");
    const uint32_t lo = hex4();
    if (lo < 0xDC00 || lo > 0xDFFF) fail_syntax("unpaired UTF-16 surrogate");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    fail_syntax("unpaired UTF-16 surrogate");
  }
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}
uint32_t Tokenizer::hex4() {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    const int c = in_.next();
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) fail_syntax("invalid \\u escape");
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}
// The continuation bytes of a UTF-8 sequence whose first byte `c` was taken (RFC 3629: no overlongs, no surrogates).
void Tokenizer::utf8_tail(int c, std::string& out) {
  int n;
  int lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    fail_syntax("invalid UTF-8 in a string");
  }
  out.push_back(static_cast<char>(c));
  for (int k = 0; k < n; ++k) {
    const int b = in_.peek();
    if (b < lo || b > hi) fail_syntax("invalid UTF-8 in a string");
    out.push_back(static_cast<char>(in_.next()));
    lo = 0x80, hi = 0xBF;
  }
}

// A number token into n: Int when it has no fraction or exponent and fits int64. The bytes that can make up a
// number are taken first, then checked against JSON's grammar -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
void Tokenizer::number(Num& n) {
  std::string& t = n.text;
  t.clear();
  in_.take_while(
      [](unsigned char b) {
        return (b >= '0' && b <= '9') || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E';
      },
      t);
  size_t i = 0;
  auto digit = [&] { return i < t.size() && t[i] >= '0' && t[i] <= '9'; };
  auto digits = [&] {
    const size_t from = i;
    while (digit()) ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  bool ok = i < t.size() && t[i] == '0' ? (++i, true) : digits();
  bool integer = true;
  if (ok && i < t.size() && t[i] == '.') ok = (++i, integer = false, digits());
  if (ok && i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i, integer = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    ok = digits();
  }
  if (!ok || i != t.size()) fail_syntax("invalid number \"" + t.substr(0, 40) + "\"");
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (integer && std::from_chars(b, e, n.i).ec == std::errc()) {
    n.kind = Num::Int;
    n.d = static_cast<double>(n.i);
    return;
  }
  n.kind = Num::Float;
  // from_chars is exact (correctly rounded, like strtod) and locale-free; strtod only for the rare out-of-range
  // literal, to get inf (1e999) or 0 (1e-999) the way a JSON parser does.
  if (std::from_chars(b, e, n.d).ec != std::errc()) n.d = std::strtod(t.c_str(), nullptr);
}

void Tokenizer::literal(const char* word) {
  for (const char* w = word; *w; ++w) {
    if (in_.peek() != *w) fail_syntax("invalid literal");
    in_.next();
  }
}

// Steps over one value of any shape. No recursion: the open brackets are a stack on the heap, so a value nested
// 100,000 deep costs 100 KB, not the call stack.
void Tokenizer::skip() {
  std::string stack;
  for (;;) {
    ws();
    const int c = in_.peek();
    if (c == '{' || c == '[') {
      in_.next();
      ws();
      if (in_.peek() == (c == '{' ? '}' : ']')) {
        in_.next();
      } else {
        stack.push_back(c == '{' ? '}' : ']');
        if (c == '{') member_key();
        continue;
      }
    } else {
      scalar_skip();
    }
    for (;;) {  // after a value: close what ends here, then a ',' starts the next value
      if (stack.empty()) return;
      ws();
      const int d = in_.peek();
      if (d == stack.back()) {
        in_.next();
        stack.pop_back();
      } else if (d == ',') {
        in_.next();
        if (stack.back() == '}') member_key();
        break;
      } else {
        fail_syntax(stack.back() == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
  }
}
void Tokenizer::member_key() {
  ws();
  if (in_.peek() != '"') fail_syntax("expected a key string");
  string(scratch_);
  expect(':', "expected ':'");
}
void Tokenizer::scalar_skip() {
  switch (in_.peek()) {
    case '"':
      string(scratch_);
      return;
    case 't':
      literal("true");
      return;
    case 'f':
      literal("false");
      return;
    case 'n':
      literal("null");
      return;
    default:
      if (in_.peek() == '-' || (in_.peek() >= '0' && in_.peek() <= '9')) {
        number(scratch_num_);
        return;
      }
      fail_syntax("expected a value");
  }
}
// A value read as a Num: numbers and strings keep their kind, anything else is skipped and becomes Other.
void Tokenizer::scalar(Num& n) {
  ws();
  const int c = in_.peek();
  if (c == '-' || (c >= '0' && c <= '9')) {
    number(n);
  } else if (c == '"') {
    string(n.text);
    n.kind = Num::String;
  } else {
    skip();
    n.kind = Num::Other;
  }
}
// A string value into `out`; false (and the value skipped) when it is not a string.
bool Tokenizer::string_value(std::string& out) {
  ws();
  if (in_.peek() != '"') {
    skip();
    return false;
  }
  string(out);
  return true;
}

bool is_one_json_value(std::string_view text) {
  Source in(text);
  const std::string name = "value";
  Tokenizer t(in, name);
  try {
    t.skip();
    t.ws();
    return in.peek() < 0;
  } catch (const TraceError&) {
    return false;
  }
}

}  // namespace ladder::json
