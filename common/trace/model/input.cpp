// See input.h. gzip through zlib's inflate, a chunk at a time: the inflated text is never all in memory.
#include "trace/model/input.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace ladder {

namespace {

std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

struct TraceInput::Gz {
  z_stream zs{};
  std::vector<unsigned char> in = std::vector<unsigned char>(1 << 20);
  uint64_t compressed = 0;  // bytes of the file handed to inflate so far
  bool eof = false;         // the file has no more bytes
  bool ended = false;       // inflate saw the end of a gzip member (its checksum and length checked)
};

TraceInput::TraceInput(const std::string& path, uint64_t max_json_bytes) : path_(path), max_(max_json_bytes) {
  if (path == "-") {
    file_ = stdin;
  } else {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw TraceError("trace " + path + " is a folder: pass it alone to read each trace in it as one rank");
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw TraceError("cannot read trace " + path + ": " + std::strerror(errno));
    close_ = true;
    if (S_ISREG(st.st_mode)) expected_ = static_cast<uint64_t>(st.st_size);
  }
  // The first two bytes decide; they stay in front of the rest of the stream either way.
  unsigned char magic[2];
  const size_t got = std::fread(magic, 1, 2, file_);
  gzip_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (gzip_) {
    gz_ = std::make_unique<Gz>();
    gz_->in[0] = magic[0];
    gz_->in[1] = magic[1];
    gz_->zs.next_in = gz_->in.data();
    gz_->zs.avail_in = 2;
    gz_->compressed = 2;
    if (inflateInit2(&gz_->zs, 16 + MAX_WBITS) != Z_OK) throw TraceError("trace " + path + ": zlib failed to start");
    // A gzip's last 4 bytes are its text's length mod 2^32: a hint for reserving events, read only for a small file.
    if (close_ && expected_ >= 18 && expected_ < (uint64_t{1} << 32) && std::fseek(file_, -4, SEEK_END) == 0) {
      unsigned char t[4];
      const uint64_t compressed = expected_;
      expected_ = 0;
      if (std::fread(t, 1, 4, file_) == 4) {
        const uint64_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (uint64_t{t[3]} << 24);
        if (isize > compressed) expected_ = isize;
      }
      std::fseek(file_, 2, SEEK_SET);
    } else {
      expected_ = 0;
    }
  }
  auto first = gzip_ ? std::string() : std::string(reinterpret_cast<const char*>(magic), got);
  source_ = std::make_unique<json::Source>([this, first](char* buf, size_t n) mutable {
    if (!first.empty()) {  // a plain file's first bytes, taken to look for the magic
      const size_t k = std::min(n, first.size());
      std::memcpy(buf, first.data(), k);
      first.erase(0, k);
      taken_ += k;
      return k;
    }
    return read(buf, n);
  });
}

TraceInput::~TraceInput() {
  if (gz_) inflateEnd(&gz_->zs);
  if (close_) std::fclose(file_);
}

size_t TraceInput::read(char* buf, size_t n) {
  size_t got = 0;
  if (!gzip_) {
    got = std::fread(buf, 1, n, file_);
  } else {
    Gz& g = *gz_;
    while (got == 0) {
      if (g.zs.avail_in == 0 && !g.eof) {
        const size_t k = std::fread(g.in.data(), 1, g.in.size(), file_);
        g.eof = k == 0;
        g.compressed += k;
        g.zs.next_in = g.in.data();
        g.zs.avail_in = static_cast<uInt>(k);
      }
      if (g.zs.avail_in == 0 && g.eof) {
        if (g.ended) break;
        throw TraceError(fmt::format("trace {}: truncated gzip: the file ends after {} compressed bytes ({} bytes of "
                                     "JSON) before the gzip stream's end",
                                     path_, g.compressed, taken_));
      }
      if (g.ended) {  // more bytes after a member: another member (gzip files may be concatenated)
        inflateReset(&g.zs);
        g.ended = false;
      }
      g.zs.next_out = reinterpret_cast<Bytef*>(buf);
      g.zs.avail_out = static_cast<uInt>(n);
      const int rc = inflate(&g.zs, Z_NO_FLUSH);
      got = n - g.zs.avail_out;
      if (rc == Z_STREAM_END) {
        g.ended = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw TraceError(fmt::format("trace {}: broken gzip data near compressed byte {}: {}", path_,
                                     g.compressed - g.zs.avail_in, g.zs.msg ? g.zs.msg : zError(rc)));
      }
    }
  }
  if (std::ferror(file_)) throw TraceError("cannot read trace " + path_ + ": read error");
  taken_ += got;
  if (taken_ > max_) {
    throw TraceError(fmt::format("trace {}: more than {} of JSON{}, the most one trace may hold (--max-json)", path_,
                                 size_text(max_), gzip_ ? " once inflated" : ""));
  }
  return got;
}

void TraceInput::finish() {
  if (std::ferror(file_)) throw TraceError("cannot read trace " + path_ + ": read error");
}

}  // namespace ladder
