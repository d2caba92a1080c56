#include "source/mysql/binlog_decompress.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>

namespace tidemark::mysql {

namespace {

constexpr size_t kMaxDeflateRatio = 1032;           // zlib's best case (zlib.net, "Technical details")
constexpr size_t kInflateChunk = size_t{64} << 10;  // first output buffer of an inflation; doubled as needed

}  // namespace

bool maria_uncompress(std::string_view src, std::string& out, std::string& error) {
  if (src.empty()) {
    error = "compressed data: empty";
    return false;
  }
  const auto first = static_cast<unsigned char>(src[0]);
  if ((first & 0x80) == 0) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", first);
    error = std::string("compressed data: header byte 0x") + hex + " lacks the compression bit";
    return false;
  }
  const unsigned alg = (first & 0x70) >> 4;
  const unsigned lenlen = first & 0x07;
  if (alg != 0) {
    error = "compressed data: unknown algorithm " + std::to_string(alg) + " (only 0 = zlib exists)";
    return false;
  }
  if (lenlen < 1 || lenlen > 4 || src.size() < 1 + lenlen) {
    error = "compressed data: bad length-of-length " + std::to_string(lenlen);
    return false;
  }
  size_t len = 0;
  for (unsigned i = 0; i < lenlen; ++i) len = (len << 8) | static_cast<unsigned char>(src[1 + i]);
  if (len > kMaxInflatedSize) {
    error = "compressed data: uncompressed length " + std::to_string(len) + " is implausible";
    return false;
  }
  std::string_view data = src.substr(1 + lenlen);
  // The length is the writer's claim: a corrupt event could claim a gigabyte from a few bytes. deflate
  // never compresses better than 1032:1, so a larger claim cannot be true; the output grows as the stream
  // inflates instead of being allocated up front.
  if (len / kMaxDeflateRatio > data.size()) {
    error = "compressed data: uncompressed length " + std::to_string(len) + " is impossible for " +
            std::to_string(data.size()) + " bytes of zlib data (deflate compresses at most 1032:1)";
    return false;
  }
  out.clear();
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) {
    error = "compressed data: zlib initialisation failed";
    return false;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = 0;
  int rc = Z_OK;
  while (true) {
    if (zs.avail_out == 0 && out.size() < len) {
      const size_t filled = out.size();
      out.resize(std::min(len, std::max(2 * filled, kInflateChunk)));
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + filled);
      zs.avail_out = static_cast<uInt>(out.size() - filled);
    }
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK) break;  // Z_OK: progress was made, so this ends
  }
  const size_t produced = out.size() - zs.avail_out;
  const size_t consumed = data.size() - zs.avail_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    error = "compressed data: zlib stream " +
            std::string(rc == Z_BUF_ERROR ? "is longer than the declared length or truncated" : "is corrupt") +
            " (declared " + std::to_string(len) + " bytes)";
    return false;
  }
  if (produced != len) {
    error = "compressed data: inflated to " + std::to_string(produced) + " bytes, header says " +
            std::to_string(len);
    return false;
  }
  if (consumed != data.size()) {
    error = "compressed data: " + std::to_string(data.size() - consumed) + " bytes after the zlib stream";
    return false;
  }
  return true;
}
bool zstd_decompress(std::string_view payload, uint64_t declared_size, std::string& out, std::string& zerr) {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) {
    zerr = "out of memory";
    return false;
  }
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  out.clear();
  size_t rc = 1;
  while (true) {
    const size_t chunk = std::max<size_t>(ZSTD_DStreamOutSize(), 1);
    const size_t old = out.size();
    if (old + chunk > kMaxInflatedSize + chunk) {
      zerr = "decompressed data exceeds the limit";
      break;
    }
    out.resize(old + chunk);
    ZSTD_outBuffer ob{out.data() + old, chunk, 0};
    rc = ZSTD_decompressStream(dctx, &ob, &in);
    out.resize(old + ob.pos);
    if (ZSTD_isError(rc)) {
      zerr = ZSTD_getErrorName(rc);
      break;
    }
    if (rc == 0) break;                         // frame complete
    if (in.pos == in.size && ob.pos < chunk) {  // input exhausted mid-frame
      zerr = "truncated zstd frame";
      break;
    }
    if (declared_size != 0 && out.size() > declared_size) {
      zerr = "decompressed data exceeds the declared uncompressed size";
      break;
    }
  }
  ZSTD_freeDCtx(dctx);
  if (zerr.empty() && in.pos != in.size) zerr = std::to_string(in.size - in.pos) + " bytes after the zstd frame";
  if (zerr.empty() && declared_size != 0 && out.size() != declared_size)
    zerr = "decompressed to " + std::to_string(out.size()) + " bytes, header says " + std::to_string(declared_size);
  return zerr.empty();
}

}  // namespace tidemark::mysql
