#include "source/mysql/charset.hpp"

#include <iconv.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <unordered_map>

#include "core/utf8.hpp"

namespace tidemark::mysql {

namespace {

struct CollationEntry {
  uint32_t id;
  const char* charset;
};

// information_schema.COLLATIONS of MariaDB 10.11 (ids 1..1270), plus MySQL 8's utf8mb3_tolower_ci (76),
// gb18030 (248..250) and utf8mb4 0900 collations (255..323). Sorted by id.
constexpr CollationEntry kCollations[] = {
    {1, "big5"}, {2, "latin2"}, {3, "dec8"}, {4, "cp850"}, {5, "latin1"}, {6, "hp8"}, {7, "koi8r"},
    {8, "latin1"}, {9, "latin2"}, {10, "swe7"}, {11, "ascii"}, {12, "ujis"}, {13, "sjis"}, {14, "cp1251"},
    {15, "latin1"}, {16, "hebrew"}, {18, "tis620"}, {19, "euckr"}, {20, "latin7"}, {21, "latin2"}, {22, "koi8u"},
    {23, "cp1251"}, {24, "gb2312"}, {25, "greek"}, {26, "cp1250"}, {27, "latin2"}, {28, "gbk"}, {29, "cp1257"},
    {30, "latin5"}, {31, "latin1"}, {32, "armscii8"}, {33, "utf8mb3"}, {34, "cp1250"}, {35, "ucs2"},
    {36, "cp866"}, {37, "keybcs2"}, {38, "macce"}, {39, "macroman"}, {40, "cp852"}, {41, "latin7"},
    {42, "latin7"}, {43, "macce"}, {44, "cp1250"}, {45, "utf8mb4"}, {46, "utf8mb4"}, {47, "latin1"},
    {48, "latin1"}, {49, "latin1"}, {50, "cp1251"}, {51, "cp1251"}, {52, "cp1251"}, {53, "macroman"},
    {54, "utf16"}, {55, "utf16"}, {56, "utf16le"}, {57, "cp1256"}, {58, "cp1257"}, {59, "cp1257"}, {60, "utf32"},
    {61, "utf32"}, {62, "utf16le"}, {63, "binary"}, {64, "armscii8"}, {65, "ascii"}, {66, "cp1250"},
    {67, "cp1256"}, {68, "cp866"}, {69, "dec8"}, {70, "greek"}, {71, "hebrew"}, {72, "hp8"}, {73, "keybcs2"},
    {74, "koi8r"}, {75, "koi8u"}, {76, "utf8mb3"}, {77, "latin2"}, {78, "latin5"}, {79, "latin7"}, {80, "cp850"},
    {81, "cp852"}, {82, "swe7"}, {83, "utf8mb3"}, {84, "big5"}, {85, "euckr"}, {86, "gb2312"}, {87, "gbk"},
    {88, "sjis"}, {89, "tis620"}, {90, "ucs2"}, {91, "ujis"}, {92, "geostd8"}, {93, "geostd8"}, {94, "latin1"},
    {95, "cp932"}, {96, "cp932"}, {97, "eucjpms"}, {98, "eucjpms"}, {99, "cp1250"}, {101, "utf16"},
    {102, "utf16"}, {103, "utf16"}, {104, "utf16"}, {105, "utf16"}, {106, "utf16"}, {107, "utf16"},
    {108, "utf16"}, {109, "utf16"}, {110, "utf16"}, {111, "utf16"}, {112, "utf16"}, {113, "utf16"},
    {114, "utf16"}, {115, "utf16"}, {116, "utf16"}, {117, "utf16"}, {118, "utf16"}, {119, "utf16"},
    {120, "utf16"}, {121, "utf16"}, {122, "utf16"}, {123, "utf16"}, {124, "utf16"}, {128, "ucs2"}, {129, "ucs2"},
    {130, "ucs2"}, {131, "ucs2"}, {132, "ucs2"}, {133, "ucs2"}, {134, "ucs2"}, {135, "ucs2"}, {136, "ucs2"},
    {137, "ucs2"}, {138, "ucs2"}, {139, "ucs2"}, {140, "ucs2"}, {141, "ucs2"}, {142, "ucs2"}, {143, "ucs2"},
    {144, "ucs2"}, {145, "ucs2"}, {146, "ucs2"}, {147, "ucs2"}, {148, "ucs2"}, {149, "ucs2"}, {150, "ucs2"},
    {151, "ucs2"}, {159, "ucs2"}, {160, "utf32"}, {161, "utf32"}, {162, "utf32"}, {163, "utf32"}, {164, "utf32"},
    {165, "utf32"}, {166, "utf32"}, {167, "utf32"}, {168, "utf32"}, {169, "utf32"}, {170, "utf32"},
    {171, "utf32"}, {172, "utf32"}, {173, "utf32"}, {174, "utf32"}, {175, "utf32"}, {176, "utf32"},
    {177, "utf32"}, {178, "utf32"}, {179, "utf32"}, {180, "utf32"}, {181, "utf32"}, {182, "utf32"},
    {183, "utf32"}, {192, "utf8mb3"}, {193, "utf8mb3"}, {194, "utf8mb3"}, {195, "utf8mb3"}, {196, "utf8mb3"},
    {197, "utf8mb3"}, {198, "utf8mb3"}, {199, "utf8mb3"}, {200, "utf8mb3"}, {201, "utf8mb3"}, {202, "utf8mb3"},
    {203, "utf8mb3"}, {204, "utf8mb3"}, {205, "utf8mb3"}, {206, "utf8mb3"}, {207, "utf8mb3"}, {208, "utf8mb3"},
    {209, "utf8mb3"}, {210, "utf8mb3"}, {211, "utf8mb3"}, {212, "utf8mb3"}, {213, "utf8mb3"}, {214, "utf8mb3"},
    {215, "utf8mb3"}, {223, "utf8mb3"}, {224, "utf8mb4"}, {225, "utf8mb4"}, {226, "utf8mb4"}, {227, "utf8mb4"},
    {228, "utf8mb4"}, {229, "utf8mb4"}, {230, "utf8mb4"}, {231, "utf8mb4"}, {232, "utf8mb4"}, {233, "utf8mb4"},
    {234, "utf8mb4"}, {235, "utf8mb4"}, {236, "utf8mb4"}, {237, "utf8mb4"}, {238, "utf8mb4"}, {239, "utf8mb4"},
    {240, "utf8mb4"}, {241, "utf8mb4"}, {242, "utf8mb4"}, {243, "utf8mb4"}, {244, "utf8mb4"}, {245, "utf8mb4"},
    {246, "utf8mb4"}, {247, "utf8mb4"}, {248, "gb18030"}, {249, "gb18030"}, {250, "gb18030"}, {255, "utf8mb4"},
    {256, "utf8mb4"}, {257, "utf8mb4"}, {258, "utf8mb4"}, {259, "utf8mb4"}, {260, "utf8mb4"}, {261, "utf8mb4"},
    {262, "utf8mb4"}, {263, "utf8mb4"}, {264, "utf8mb4"}, {265, "utf8mb4"}, {266, "utf8mb4"}, {267, "utf8mb4"},
    {268, "utf8mb4"}, {269, "utf8mb4"}, {270, "utf8mb4"}, {271, "utf8mb4"}, {272, "utf8mb4"}, {273, "utf8mb4"},
    {274, "utf8mb4"}, {275, "utf8mb4"}, {276, "utf8mb4"}, {277, "utf8mb4"}, {278, "utf8mb4"}, {279, "utf8mb4"},
    {280, "utf8mb4"}, {281, "utf8mb4"}, {282, "utf8mb4"}, {283, "utf8mb4"}, {284, "utf8mb4"}, {285, "utf8mb4"},
    {286, "utf8mb4"}, {287, "utf8mb4"}, {288, "utf8mb4"}, {289, "utf8mb4"}, {290, "utf8mb4"}, {291, "utf8mb4"},
    {292, "utf8mb4"}, {293, "utf8mb4"}, {294, "utf8mb4"}, {295, "utf8mb4"}, {296, "utf8mb4"}, {297, "utf8mb4"},
    {298, "utf8mb4"}, {299, "utf8mb4"}, {300, "utf8mb4"}, {301, "utf8mb4"}, {302, "utf8mb4"}, {303, "utf8mb4"},
    {304, "utf8mb4"}, {305, "utf8mb4"}, {306, "utf8mb4"}, {307, "utf8mb4"}, {308, "utf8mb4"}, {309, "utf8mb4"},
    {310, "utf8mb4"}, {311, "utf8mb4"}, {312, "utf8mb4"}, {313, "utf8mb4"}, {314, "utf8mb4"}, {315, "utf8mb4"},
    {316, "utf8mb4"}, {317, "utf8mb4"}, {318, "utf8mb4"}, {319, "utf8mb4"}, {320, "utf8mb4"}, {321, "utf8mb4"},
    {322, "utf8mb4"}, {323, "utf8mb4"}, {576, "utf8mb3"}, {577, "utf8mb3"}, {578, "utf8mb3"}, {608, "utf8mb4"},
    {609, "utf8mb4"}, {610, "utf8mb4"}, {640, "ucs2"}, {641, "ucs2"}, {642, "ucs2"}, {672, "utf16"},
    {673, "utf16"}, {674, "utf16"}, {736, "utf32"}, {737, "utf32"}, {738, "utf32"}, {1025, "big5"},
    {1027, "dec8"}, {1028, "cp850"}, {1030, "hp8"}, {1031, "koi8r"}, {1032, "latin1"}, {1033, "latin2"},
    {1034, "swe7"}, {1035, "ascii"}, {1036, "ujis"}, {1037, "sjis"}, {1040, "hebrew"}, {1042, "tis620"},
    {1043, "euckr"}, {1046, "koi8u"}, {1048, "gb2312"}, {1049, "greek"}, {1050, "cp1250"}, {1052, "gbk"},
    {1054, "latin5"}, {1056, "armscii8"}, {1057, "utf8mb3"}, {1059, "ucs2"}, {1060, "cp866"}, {1061, "keybcs2"},
    {1062, "macce"}, {1063, "macroman"}, {1064, "cp852"}, {1065, "latin7"}, {1067, "macce"}, {1069, "utf8mb4"},
    {1070, "utf8mb4"}, {1071, "latin1"}, {1074, "cp1251"}, {1075, "cp1251"}, {1077, "macroman"}, {1078, "utf16"},
    {1079, "utf16"}, {1080, "utf16le"}, {1081, "cp1256"}, {1082, "cp1257"}, {1083, "cp1257"}, {1084, "utf32"},
    {1085, "utf32"}, {1086, "utf16le"}, {1088, "armscii8"}, {1089, "ascii"}, {1090, "cp1250"}, {1091, "cp1256"},
    {1092, "cp866"}, {1093, "dec8"}, {1094, "greek"}, {1095, "hebrew"}, {1096, "hp8"}, {1097, "keybcs2"},
    {1098, "koi8r"}, {1099, "koi8u"}, {1101, "latin2"}, {1102, "latin5"}, {1103, "latin7"}, {1104, "cp850"},
    {1105, "cp852"}, {1106, "swe7"}, {1107, "utf8mb3"}, {1108, "big5"}, {1109, "euckr"}, {1110, "gb2312"},
    {1111, "gbk"}, {1112, "sjis"}, {1113, "tis620"}, {1114, "ucs2"}, {1115, "ujis"}, {1116, "geostd8"},
    {1117, "geostd8"}, {1119, "cp932"}, {1120, "cp932"}, {1121, "eucjpms"}, {1122, "eucjpms"}, {1125, "utf16"},
    {1147, "utf16"}, {1152, "ucs2"}, {1174, "ucs2"}, {1184, "utf32"}, {1206, "utf32"}, {1216, "utf8mb3"},
    {1238, "utf8mb3"}, {1248, "utf8mb4"}, {1270, "utf8mb4"},
};

struct CharsetEntry {
  const char* name;
  Charset charset;
  const char* iconv;  // "" when glibc has no converter: bytes >= 0x80 become U+FFFD
};

constexpr CharsetEntry kCharsets[] = {
    {"binary", Charset::Binary, ""},          {"utf8mb4", Charset::Utf8mb4, ""},
    {"utf8mb3", Charset::Utf8mb3, ""},        {"ascii", Charset::Ascii, ""},
    {"latin1", Charset::Latin1, ""},          {"big5", Charset::Other, "BIG5"},
    {"latin2", Charset::Other, "ISO-8859-2"}, {"dec8", Charset::Other, "DEC-MCS"},
    {"cp850", Charset::Other, "CP850"},       {"hp8", Charset::Other, "HP-ROMAN8"},
    {"koi8r", Charset::Other, "KOI8-R"},      {"swe7", Charset::Other, "ISO646-SE"},
    {"ujis", Charset::Other, "EUC-JP"},       {"sjis", Charset::Other, "SJIS"},
    {"cp1251", Charset::Other, "CP1251"},     {"hebrew", Charset::Other, "ISO-8859-8"},
    {"tis620", Charset::Other, "TIS-620"},    {"euckr", Charset::Other, "EUC-KR"},
    {"latin7", Charset::Other, "ISO-8859-13"}, {"koi8u", Charset::Other, "KOI8-U"},
    {"gb2312", Charset::Other, "EUC-CN"},     {"greek", Charset::Other, "ISO-8859-7"},
    {"cp1250", Charset::Other, "CP1250"},     {"gbk", Charset::Other, "GBK"},
    {"cp1257", Charset::Other, "CP1257"},     {"latin5", Charset::Other, "ISO-8859-9"},
    {"armscii8", Charset::Other, "ARMSCII-8"}, {"ucs2", Charset::Other, "UCS-2BE"},
    {"cp866", Charset::Other, "CP866"},       {"keybcs2", Charset::Other, ""},
    {"macce", Charset::Other, "MAC-CENTRALEUROPE"}, {"macroman", Charset::Other, "MACINTOSH"},
    {"cp852", Charset::Other, "CP852"},       {"cp1256", Charset::Other, "CP1256"},
    {"cp932", Charset::Other, "CP932"},       {"eucjpms", Charset::Other, "EUC-JP-MS"},
    {"utf16", Charset::Other, "UTF-16BE"},    {"utf16le", Charset::Other, "UTF-16LE"},
    {"utf32", Charset::Other, "UTF-32BE"},    {"geostd8", Charset::Other, "GEORGIAN-PS"},
    {"gb18030", Charset::Other, "GB18030"},
};

const CharsetEntry* charset_entry(uint32_t collation) {
  auto it = std::lower_bound(std::begin(kCollations), std::end(kCollations), collation,
                             [](const CollationEntry& e, uint32_t id) { return e.id < id; });
  if (it == std::end(kCollations) || it->id != collation) return nullptr;
  for (const auto& c : kCharsets) {
    if (std::string_view(c.name) == it->charset) return &c;
  }
  return nullptr;
}


void append_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// 0x80..0x9F of MySQL's latin1 (cp1252; the five undefined bytes map to the C1 controls).
constexpr std::array<uint16_t, 32> kLatin1High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void append_latin1(std::string& out, std::string_view bytes) {
  for (char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x80) {
      out.push_back(ch);
    } else if (b < 0xA0) {
      append_code_point(out, kLatin1High[b - 0x80]);
    } else {
      append_code_point(out, b);
    }
  }
}

void append_ascii_only(std::string& out, std::string_view bytes) {
  for (char ch : bytes) {
    if (static_cast<unsigned char>(ch) < 0x80) {
      out.push_back(ch);
    } else {
      out.append(kUtf8Replacement);
    }
  }
}

// Size of a code unit to skip on an invalid sequence.
size_t unit_size(std::string_view iconv_name) {
  if (iconv_name.starts_with("UTF-32")) return 4;
  if (iconv_name.starts_with("UTF-16") || iconv_name.starts_with("UCS-2")) return 2;
  return 1;
}

// One converter per character set and thread (iconv_t is stateful, not shareable across threads). A
// cache, not state: each conversion starts from the initial shift state. Closed when the thread ends.
class ConverterCache {
 public:
  ConverterCache() = default;
  ConverterCache(const ConverterCache&) = delete;
  ConverterCache& operator=(const ConverterCache&) = delete;
  ~ConverterCache() {
    for (auto& [name, cd] : converters_)
      if (cd != reinterpret_cast<iconv_t>(-1)) iconv_close(cd);
  }
  iconv_t get(const char* iconv_name) {
    auto it = converters_.find(iconv_name);
    if (it != converters_.end()) return it->second;
    return converters_.emplace(iconv_name, iconv_open("UTF-8", iconv_name)).first->second;
  }

 private:
  std::unordered_map<std::string, iconv_t> converters_;
};

iconv_t converter(const char* iconv_name) {
  thread_local ConverterCache cache;
  return cache.get(iconv_name);
}

void append_iconv(std::string& out, std::string_view bytes, const char* iconv_name) {
  iconv_t cd = converter(iconv_name);
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    append_ascii_only(out, bytes);
    return;
  }
  iconv(cd, nullptr, nullptr, nullptr, nullptr);  // initial state
  const size_t skip = unit_size(iconv_name);
  char buf[1024];
  // iconv's prototype takes char** for the input; it does not write through it.
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  while (in_left > 0) {
    char* o = buf;
    size_t o_left = sizeof buf;
    const size_t rc = iconv(cd, &in, &in_left, &o, &o_left);
    out.append(buf, static_cast<size_t>(o - buf));
    if (rc != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) continue;
    out.append(kUtf8Replacement);
    if (errno == EILSEQ) {
      const size_t n = std::min(skip, in_left);
      in += n;
      in_left -= n;
      iconv(cd, nullptr, nullptr, nullptr, nullptr);
    } else {
      break;  // EINVAL: incomplete sequence at the end
    }
  }
}

}  // namespace

Charset charset_of_collation(uint32_t collation) {
  const CharsetEntry* e = charset_entry(collation);
  return e ? e->charset : Charset::Unknown;
}

std::string_view charset_name_of_collation(uint32_t collation) {
  const CharsetEntry* e = charset_entry(collation);
  return e ? std::string_view(e->name) : std::string_view();
}

std::string_view charset_iconv_name(uint32_t collation) {
  const CharsetEntry* e = charset_entry(collation);
  return e ? std::string_view(e->iconv) : std::string_view();
}

bool append_valid_utf8(std::string& out, std::string_view s) {
  bool clean = true;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  while (p < end) {
    // Fast path over ASCII.
    const auto* ascii_end = p;
    while (ascii_end < end && *ascii_end < 0x80) ++ascii_end;
    out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(ascii_end - p));
    p = ascii_end;
    if (p >= end) break;
    const Utf8Sequence seq = utf8_sequence(p, end);
    if (seq.valid) {
      out.append(reinterpret_cast<const char*>(p), seq.length);
    } else {
      out.append(kUtf8Replacement);  // one replacement for the maximal ill-formed subpart
      clean = false;
    }
    p += seq.length;
  }
  return clean;
}

void append_as_utf8(std::string& out, std::string_view bytes, uint32_t collation) {
  const CharsetEntry* e = charset_entry(collation);
  if (e == nullptr) {
    append_valid_utf8(out, bytes);
    return;
  }
  switch (e->charset) {
    case Charset::Latin1: append_latin1(out, bytes); return;
    case Charset::Ascii: append_ascii_only(out, bytes); return;
    case Charset::Other:
      if (*e->iconv == '\0') {
        append_ascii_only(out, bytes);
      } else {
        append_iconv(out, bytes, e->iconv);
      }
      return;
    default: append_valid_utf8(out, bytes); return;
  }
}

std::string to_utf8(std::string_view bytes, uint32_t collation) {
  std::string out;
  out.reserve(bytes.size());
  append_as_utf8(out, bytes, collation);
  return out;
}

}  // namespace tidemark::mysql
