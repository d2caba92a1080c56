#include "source/mysql/binlog_decoder.hpp"

#include <utility>

namespace tidemark::mysql {

namespace {

// The owning result of a view decode over `out.bytes`.
std::variant<DecodedEvent, DecodeError> keep(DecodedEvent out, std::variant<EventView, EventFailure> decoded) {
  if (auto* failure = std::get_if<EventFailure>(&decoded)) return std::move(failure->error);
  auto& view = std::get<EventView>(decoded);
  out.header = view.raw.header;
  out.checksum_length = out.bytes.size() - kEventHeaderLength - view.raw.body.size();
  out.event = std::move(view.event);
  return out;
}

}  // namespace

std::variant<EventView, EventFailure> BinlogDecoder::decode_with(std::string_view bytes, ChecksumAlgorithm checksum) const {
  auto split = split_event(bytes, checksum);
  if (auto* bad = std::get_if<DecodeError>(&split)) return EventFailure{true, std::move(*bad), {}};
  EventView out{std::get<RawEvent>(split), {}};
  auto decoded = decode_event(out.raw, format_);
  if (auto* bad = std::get_if<DecodeError>(&decoded)) return EventFailure{false, std::move(*bad), out.raw.header};
  out.event = std::move(std::get<BinlogEvent>(decoded));
  return out;
}

std::variant<EventView, EventFailure> BinlogDecoder::decode_view(std::string_view bytes) {
  auto decoded = decode_with(bytes, format_.checksum);
  if (auto* view = std::get_if<EventView>(&decoded)) {
    if (const auto* fde = std::get_if<FormatDescriptionEvent>(&view->event)) {
      format_ = fde->format;
      // A pre-checksum server's FDE (Undefined) means: no checksums in what follows.
      if (format_.checksum == ChecksumAlgorithm::Undefined) format_.checksum = ChecksumAlgorithm::Off;
    }
  }
  return decoded;
}

std::variant<EventView, EventFailure> BinlogDecoder::decode_inner_view(std::string_view bytes) const {
  return decode_with(bytes, ChecksumAlgorithm::Off);
}

std::variant<DecodedEvent, DecodeError> BinlogDecoder::decode(uint64_t position, std::string bytes) {
  DecodedEvent out;
  out.position = position;
  out.bytes = std::move(bytes);
  auto decoded = decode_view(out.bytes);
  return keep(std::move(out), std::move(decoded));
}

std::variant<DecodedEvent, DecodeError> BinlogDecoder::decode_inner(std::string bytes) const {
  DecodedEvent out;
  out.bytes = std::move(bytes);
  auto decoded = decode_inner_view(out.bytes);
  return keep(std::move(out), std::move(decoded));
}

}  // namespace tidemark::mysql
