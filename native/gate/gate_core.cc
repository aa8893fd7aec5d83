// Portico request gate: core scanner. See gate_core.h and /work/shared/DESIGN.md ("gate").
//
// How the whole value gets validated with simdjson 0.9.1 On Demand:
//  * parser.iterate() runs stage 1 over the whole input (runtime-dispatched SIMD kernel):
//    UTF-8 validation, unterminated strings, unescaped control characters inside strings.
//  * We then walk EVERY value with the On Demand API (objects, arrays, numbers, literals):
//    structure (commas, colons, brackets, keys being strings), numbers (get_double), literals
//    (get_bool / is_null). Strings are not unescaped (that would copy them); instead their escapes
//    are validated in place (memchr for '\\', then check the escape; surrogates must pair).
//  * After the top-level object closes, the iterator must be at the end of the token stream
//    (no trailing content).
// Nothing is built: no DOM, no string copies (except keys with escapes, unescaped for matching).
#include "gate_core.h"

#include <cmath>
#include <cstring>
#include <cstdio>
#include <memory>
#include <utility>

#include "simdjson.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// simdjson 0.9.1's ondemand::document declares `friend class token;` but never defines `token`.
// We define it as a one-line accessor to the document's json_iterator: we need its token
// positions for the byte span of containers (closing bracket) and for the end-of-input check,
// which the 0.9.1 public API does not expose. Read-only use; nothing is modified.
namespace simdjson {
namespace SIMDJSON_BUILTIN_IMPLEMENTATION {
namespace ondemand {
class token {
 public:
  static json_iterator &iter(document &doc) noexcept { return doc.iter; }
};
}  // namespace ondemand
}  // namespace SIMDJSON_BUILTIN_IMPLEMENTATION
}  // namespace simdjson

namespace portico_gate {

namespace od = simdjson::SIMDJSON_BUILTIN_IMPLEMENTATION::ondemand;
using simdjson::error_code;

namespace {

constexpr int MAX_DEPTH = 512;                       // nesting limit (objects + arrays)
constexpr size_t SHRINK_ABOVE = size_t(16) << 20;    // free per-thread buffers after a >16 MiB body
constexpr double TWO_POW_53 = 9007199254740992.0;  // |n| >= 2^53: not a safe integer (2^53+1 rounds to 2^53)

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

struct State {
  od::parser parser;
  std::unique_ptr<uint8_t[]> buf;
  size_t cap = 0;
  std::string key;  // scratch for keys with escapes
};

thread_local std::unique_ptr<State> tls_state;

State &state() {
  if (!tls_state) tls_state.reset(new State());
  return *tls_state;
}

inline int hexval(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

inline int hex4(const uint8_t *p) {
  int a = hexval(p[0]), b = hexval(p[1]), c = hexval(p[2]), d = hexval(p[3]);
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

// Decodes one escape at p (p[0] == '\\'), bounded by end (the closing quote). Returns the number of
// bytes consumed (2, 6 or 12) and the code point, or 0 if the escape is invalid.
inline int decode_escape(const uint8_t *p, const uint8_t *end, uint32_t &cp) {
  if (p + 1 >= end) return 0;
  switch (p[1]) {
    case '"': cp = '"'; return 2;
    case '\\': cp = '\\'; return 2;
    case '/': cp = '/'; return 2;
    case 'b': cp = '\b'; return 2;
    case 'f': cp = '\f'; return 2;
    case 'n': cp = '\n'; return 2;
    case 'r': cp = '\r'; return 2;
    case 't': cp = '\t'; return 2;
    case 'u': {
      if (end - p < 6) return 0;
      int u = hex4(p + 2);
      if (u < 0) return 0;
      if (u >= 0xD800 && u <= 0xDBFF) {  // high surrogate: a low one must follow
        if (end - p < 12 || p[6] != '\\' || p[7] != 'u') return 0;
        int lo = hex4(p + 8);
        if (lo < 0xDC00 || lo > 0xDFFF) return 0;
        cp = 0x10000 + ((uint32_t(u) - 0xD800) << 10) + (uint32_t(lo) - 0xDC00);
        return 12;
      }
      if (u >= 0xDC00 && u <= 0xDFFF) return 0;  // lone low surrogate
      cp = uint32_t(u);
      return 6;
    }
    default: return 0;
  }
}

// Validates the escapes of raw string content [p, end). Returns nullptr if valid, else the
// position of the bad escape. Sets `any` if there is at least one backslash. SSE2 (x86-64 baseline)
// finds backslashes 16 bytes at a time: long prompts with many "\n" escapes would otherwise pay a
// memchr call per escape.
inline const uint8_t *check_escapes(const uint8_t *p, const uint8_t *end, bool &any) {
  any = false;
#if defined(__SSE2__)
  const __m128i bs = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    unsigned mask = unsigned(_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)), bs)));
    if (!mask) { p += 16; continue; }
    const uint8_t *q = p + __builtin_ctz(mask);
    uint32_t cp;
    int n = decode_escape(q, end, cp);
    if (!n) return q;
    any = true;
    p = q + n;
  }
#endif
  while (p < end) {
    p = static_cast<const uint8_t *>(std::memchr(p, '\\', size_t(end - p)));
    if (!p) return nullptr;
    uint32_t cp;
    int n = decode_escape(p, end, cp);
    if (!n) return p;
    any = true;
    p += n;
  }
  return nullptr;
}

inline void put_utf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

// Unescapes [p, end) into out. Returns nullptr on success or the position of a bad escape.
inline const uint8_t *unescape(const uint8_t *p, const uint8_t *end, std::string &out) {
  out.clear();
  while (p < end) {
    if (*p != '\\') { out.push_back(char(*p++)); continue; }
    uint32_t cp;
    int n = decode_escape(p, end, cp);
    if (!n) return p;
    put_utf8(out, cp);
    p += n;
  }
  return nullptr;
}

// Finds the closing quote of a key starting at p (just after its opening quote). Stage 1 has
// already guaranteed that every string is terminated. Sets `escaped` if a backslash occurs.
inline const uint8_t *key_end(const uint8_t *p, bool &escaped) {
  escaped = false;
  for (;;) {
    uint8_t c = *p;
    if (c == '"') return p;
    if (c == '\\') { escaped = true; p += 2; } else { p++; }
  }
}

// Locates a stage-1 error (invalid UTF-8, control character in a string, unterminated string) with
// a scalar pass. Only runs on the error path.
size_t locate_stage1(const uint8_t *b, size_t len, const char *&what) {
  bool in_str = false;
  size_t str_start = 0;
  size_t i = 0;
  while (i < len) {
    uint8_t c = b[i];
    if (c < 0x80) {
      if (in_str) {
        if (c == '"') in_str = false;
        else if (c == '\\') { if (i + 1 < len && b[i + 1] < 0x80) i++; }
        else if (c < 0x20) { what = "unescaped control character in string"; return i; }
      } else if (c == '"') {
        in_str = true;
        str_start = i;
      }
      i++;
      continue;
    }
    // multi-byte UTF-8 sequence
    size_t n;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) { n = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) n = 3;
    else if (c == 0xED) { n = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) n = 3;
    else if (c == 0xF0) { n = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) { n = 4; hi = 0x8F; }
    else { what = "invalid UTF-8"; return i; }
    if (i + n > len) { what = "invalid UTF-8 (truncated sequence)"; return i; }
    if (b[i + 1] < lo || b[i + 1] > hi) { what = "invalid UTF-8"; return i; }
    for (size_t k = 2; k < n; k++) {
      if (b[i + k] < 0x80 || b[i + k] > 0xBF) { what = "invalid UTF-8"; return i; }
    }
    i += n;
  }
  if (in_str) { what = "unterminated string"; return str_start; }
  what = nullptr;
  return len;
}

struct Walker {
  const uint8_t *buf;   // padded copy
  size_t len;           // length of the scanned JSON inside buf
  size_t base;          // absolute offset of buf[shift] in the caller's body
  size_t shift;         // bytes of buf before the caller's data (1 when wrapped in [ ])
  std::string &err;
  od::json_iterator *it = nullptr;

  size_t offset(const uint8_t *p) const {
    if (p < buf + shift) p = buf + shift;
    if (p > buf + len) p = buf + len;
    return size_t(p - buf) - shift + base;
  }

  int fail(const uint8_t *p, const char *what) {
    err = "invalid JSON at byte ";
    err += std::to_string(offset(p));
    err += ": ";
    err += what;
    return ERR_INVALID;
  }

  int unexpected(const uint8_t *p) {
    size_t off = size_t(p - buf);
    if (p < buf || off >= len - (shift ? 1 : 0)) return fail(p, "unexpected end of input");
    uint8_t c = *p;
    char msg[64];
    if (c >= 0x20 && c < 0x7F) std::snprintf(msg, sizeof msg, "unexpected character '%c'", c);
    else std::snprintf(msg, sizeof msg, "unexpected byte 0x%02X", c);
    return fail(p, msg);
  }

  int fail_code(error_code e, const uint8_t *p) {
    switch (e) {
      case simdjson::TAPE_ERROR:
      case simdjson::INCORRECT_TYPE: return unexpected(p);
      case simdjson::NUMBER_ERROR: return fail(p, "invalid number");
      case simdjson::T_ATOM_ERROR:
      case simdjson::F_ATOM_ERROR:
      case simdjson::N_ATOM_ERROR: return fail(p, "invalid literal");
      case simdjson::DEPTH_ERROR: return fail(p, "nesting too deep");
      default: return fail(p, simdjson::error_message(e));
    }
  }

  // Closing quote of a string value whose raw token (opening quote up to the next structural
  // character) is [p, p + n).
  static const uint8_t *string_close(const uint8_t *p, size_t n) {
    const uint8_t *e = p + n;
    while (e > p + 1 && is_ws(e[-1])) e--;
    if (e <= p + 1 || e[-1] != '"') return nullptr;
    return e - 1;
  }

  int check_string(const uint8_t *p, size_t n, const uint8_t *&close, bool &escaped) {
    close = string_close(p, n);
    if (!close) return unexpected(p + n);
    const uint8_t *bad = check_escapes(p + 1, close, escaped);
    if (bad) return fail(bad, "invalid escape sequence in string");
    return 0;
  }

  int check_key(const uint8_t *k) {
    bool esc;
    const uint8_t *e = key_end(k, esc);
    if (esc) {
      bool any;
      const uint8_t *bad = check_escapes(k, e, any);
      if (bad) return fail(bad, "invalid escape sequence in key");
    }
    return 0;
  }

  // Validates one value completely without building anything. For containers, *count receives
  // the number of elements/members.
  int walk(od::value &v, int depth, uint32_t *count) {
    std::string_view tok = v.raw_json_token();
    const uint8_t *p = reinterpret_cast<const uint8_t *>(tok.data());
    error_code e;
    switch (*p) {
      case '{': {
        if (depth >= MAX_DEPTH) return fail(p, "nesting too deep");
        od::object o;
        if ((e = v.get_object().get(o))) return fail_code(e, it->peek(-1));
        uint32_t n = 0;
        for (auto fr : o) {
          od::field f;
          if ((e = std::move(fr).get(f))) return fail_code(e, it->peek(-1));
          if (int r = check_key(reinterpret_cast<const uint8_t *>(f.key().raw()))) return r;
          if (int r = walk(f.value(), depth + 1, nullptr)) return r;
          n++;
        }
        if (count) *count = n;
        return 0;
      }
      case '[': {
        if (depth >= MAX_DEPTH) return fail(p, "nesting too deep");
        od::array a;
        if ((e = v.get_array().get(a))) return fail_code(e, it->peek(-1));
        uint32_t n = 0;
        for (auto er : a) {
          od::value ev;
          if ((e = std::move(er).get(ev))) return fail_code(e, it->peek(-1));
          if (int r = walk(ev, depth + 1, nullptr)) return r;
          n++;
        }
        if (count) *count = n;
        return 0;
      }
      case '"': {
        const uint8_t *close;
        bool escaped;
        return check_string(p, tok.size(), close, escaped);
      }
      case 't':
      case 'f': {
        bool b;
        if (v.get_bool().get(b)) return fail(p, "invalid literal");
        return 0;
      }
      case 'n':
        if (!v.is_null()) return fail(p, "invalid literal");
        return 0;
      case '-': case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9': {
        double d;
        if (v.get_double().get(d)) return fail(p, "invalid number");
        return 0;
      }
      default:
        return unexpected(p);
    }
  }
};

const char *type_name(uint8_t c) {
  switch (c) {
    case '[': return "an array";
    case '"': return "a string";
    case 't': case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
  }
}

bool ensure_capacity(State &st, size_t need) {
  if (st.cap >= need) return true;
  size_t cap = st.cap ? st.cap : 4096;
  while (cap < need) cap *= 2;
  uint8_t *p = new (std::nothrow) uint8_t[cap];
  if (!p) return false;
  st.buf.reset(p);
  st.cap = cap;
  return true;
}

// The top-level value is not an object: validate it (wrapped in [ ] so that the non-root On
// Demand code paths apply to scalars too), then report ERR_NOT_OBJECT or ERR_INVALID.
int scan_non_object(State &st, size_t len, size_t base, size_t first, std::string &err) {
  uint8_t *b = st.buf.get();
  std::memmove(b + 1, b, len);
  b[0] = '[';
  b[len + 1] = ']';
  std::memset(b + len + 2, 0, simdjson::SIMDJSON_PADDING);
  Walker w{b, len + 2, base, 1, err};
  od::document doc;
  error_code e = st.parser.iterate(b, len + 2, st.cap).get(doc);
  if (e) {
    const char *what = nullptr;
    size_t at = locate_stage1(b + 1, len, what);
    return w.fail(b + 1 + at, what ? what : simdjson::error_message(e));
  }
  od::json_iterator &it = od::token::iter(doc);
  w.it = &it;
  od::array a;
  if ((e = doc.get_array().get(a))) return w.fail_code(e, it.peek(-1));
  uint32_t n = 0;
  for (auto er : a) {
    od::value ev;
    if ((e = std::move(er).get(ev))) return w.fail_code(e, it.peek(-1));
    if (n == 1) return w.unexpected(reinterpret_cast<const uint8_t *>(ev.raw_json_token().data()));
    if (int r = w.walk(ev, 1, nullptr)) return r;
    n++;
  }
  // the wrapper's ']' closed the outer array early: the user's extra closing bracket is peek(-1)
  if (!it.at_eof()) return w.unexpected(it.peek(-1));
  err = "request body must be a JSON object, got ";
  err += type_name(b[1 + first]);
  return ERR_NOT_OBJECT;
}

}  // namespace

Table::Table(const std::vector<std::string> &names) : names_(names) {
  std::vector<uint32_t> counts(256, 0);
  for (auto &n : names_) counts[bucket(reinterpret_cast<const uint8_t *>(n.data()), n.size())]++;
  start_[0] = 0;
  for (int b = 0; b < 256; b++) start_[b + 1] = start_[b] + counts[b];
  entries_.resize(names_.size());
  std::vector<uint32_t> fill(start_, start_ + 256);
  for (size_t i = 0; i < names_.size(); i++) {
    const std::string &n = names_[i];
    unsigned b = bucket(reinterpret_cast<const uint8_t *>(n.data()), n.size());
    entries_[fill[b]++] = Entry{uint32_t(n.size()), int32_t(i), n.data()};  // insertion order
  }
}

unsigned Table::bucket(const uint8_t *key, size_t len) noexcept {
  if (len == 0) return 0;
  uint32_t h = uint32_t(len) * 0x9E3779B1u;
  h ^= uint32_t(key[0]) * 0x85EBCA77u;
  h ^= uint32_t(key[len - 1]) * 0xC2B2AE3Du;
  h ^= uint32_t(key[len >> 1]) * 0x27D4EB2Fu;
  return h >> 24;
}

int Table::lookup(const uint8_t *key, size_t len) const noexcept {
  unsigned b = bucket(key, len);
  for (uint32_t i = start_[b], e = start_[b + 1]; i < e; i++) {
    const Entry &en = entries_[i];
    if (en.len == len && std::memcmp(en.bytes, key, len) == 0) return en.index;
  }
  return -1;
}

const char *implementation_name() {
  return simdjson::active_implementation->name().c_str();
}

int scan(const uint8_t *body, size_t len, size_t base, const Table *table, double *out, size_t cap,
         std::string &err, std::string *member) {
  State &st = state();
  if (member) member->clear();
  if (len == 0) {
    err = "invalid JSON at byte " + std::to_string(base) + ": empty body";
    return ERR_INVALID;
  }
  if (len > size_t(0xFFFFFFFFu) - 1024) {
    err = "request body too large for the JSON gate (4 GiB limit)";
    return ERR_INVALID;
  }
  if (!ensure_capacity(st, len + 2 + simdjson::SIMDJSON_PADDING)) {
    err = "out of memory in the JSON gate";
    return ERR_INVALID;
  }
  uint8_t *b = st.buf.get();
  std::memcpy(b, body, len);
  std::memset(b + len, 0, simdjson::SIMDJSON_PADDING);

  struct Shrink {  // release big per-thread buffers after an unusually large body
    size_t len;
    ~Shrink() { if (len > SHRINK_ABOVE) tls_state.reset(); }
  } shrink{len};

  Walker w{b, len, base, 0, err};
  size_t first = 0;
  while (first < len && is_ws(b[first])) first++;
  if (first == len) return w.fail(b + len, "empty body (only whitespace)");
  if (b[first] != '{') return scan_non_object(st, len, base, first, err);
  size_t last = len;
  while (is_ws(b[last - 1])) last--;
  if (b[last - 1] != '}') {
    // Either the object is truncated or something follows it. Validate first for a precise message.
    int r = scan_non_object(st, len, base, first, err);
    if (r == ERR_INVALID) return r;
    return w.fail(b + last - 1, "unexpected content at end of input");  // not reached in practice
  }

  od::document doc;
  error_code e = st.parser.iterate(b, len, st.cap).get(doc);
  if (e) {
    const char *what = nullptr;
    size_t at = locate_stage1(b, len, what);
    return w.fail(b + at, what ? what : simdjson::error_message(e));
  }
  od::json_iterator &it = od::token::iter(doc);
  w.it = &it;
  od::object obj;
  if ((e = doc.get_object().get(obj))) return w.fail_code(e, it.peek(-1));

  size_t n = 0;
  std::string &kbuf = st.key;
  for (auto fr : obj) {
    od::field f;
    if ((e = std::move(fr).get(f))) return w.fail_code(e, it.peek(-1));
    const uint8_t *ks = reinterpret_cast<const uint8_t *>(f.key().raw());
    bool kesc;
    const uint8_t *ke = key_end(ks, kesc);
    int field = -1;
    double flags = 0;
    if (kesc) {
      const uint8_t *bad = unescape(ks, ke, kbuf);
      if (bad) return w.fail(bad, "invalid escape sequence in key");
      if (table) field = table->lookup(reinterpret_cast<const uint8_t *>(kbuf.data()), kbuf.size());
      flags = F_KEY_ESCAPED;
    } else if (table) {
      field = table->lookup(ks, size_t(ke - ks));
    }

    od::value &v = f.value();
    std::string_view tok = v.raw_json_token();
    const uint8_t *p = reinterpret_cast<const uint8_t *>(tok.data());
    const uint8_t *vs = p, *ve;
    int type;
    double num = 0;
    // the value of this member is invalid: say which member (the client's error names the field)
    auto in_member = [&](int r) {
      if (member) {
        if (kesc) member->assign(kbuf);
        else member->assign(reinterpret_cast<const char *>(ks), size_t(ke - ks));
      }
      return r;
    };
    switch (*p) {
      case '"': {
        const uint8_t *close;
        bool esc;
        if (int r = w.check_string(p, tok.size(), close, esc)) return in_member(r);
        type = T_STRING;
        vs = p + 1;
        ve = close;
        if (esc) flags += F_STRING_ESCAPED;
        break;
      }
      case '{':
      case '[': {
        uint32_t count = 0;
        if (int r = w.walk(v, 1, &count)) return in_member(r);
        ve = it.peek(-1) + 1;
        if (ve[-1] != (*p == '{' ? '}' : ']')) return w.fail(p, "internal error: container end");
        type = *p == '{' ? T_OBJECT : T_ARRAY;
        num = count;
        break;
      }
      case 't':
      case 'f': {
        bool bv;
        if (v.get_bool().get(bv)) return in_member(w.fail(p, "invalid literal"));
        type = T_BOOL;
        num = bv ? 1 : 0;
        ve = p + (bv ? 4 : 5);
        break;
      }
      case 'n':
        if (!v.is_null()) return in_member(w.fail(p, "invalid literal"));
        type = T_NULL;
        ve = p + 4;
        break;
      case '-': case '0': case '1': case '2': case '3': case '4':
      case '5': case '6': case '7': case '8': case '9': {
        if (v.get_double().get(num)) return in_member(w.fail(p, "invalid number"));
        if (num == 0 && *p == '-') num = -0.0;  // simdjson 0.9.1 returns +0 for "-0"
        type = T_NUMBER;
        ve = p + tok.size();
        while (is_ws(ve[-1])) ve--;
        bool integer = true;
        for (const uint8_t *q = p; q < ve; q++) {
          if (*q == '.' || *q == 'e' || *q == 'E') { integer = false; break; }
        }
        if (integer) flags += F_INTEGER;
        if ((num == 0 && std::signbit(num)) || std::fabs(num) >= TWO_POW_53) flags += F_INEXACT;
        break;
      }
      default:
        return in_member(w.unexpected(p));
    }
    if (n < cap) {
      double *r = out + n * STRIDE;
      r[0] = field;
      r[1] = double(w.offset(ks));
      r[2] = double(w.offset(ke));
      r[3] = type;
      r[4] = double(w.offset(vs));
      r[5] = double(w.offset(ve));
      r[6] = num;
      r[7] = flags;
    }
    n++;
  }
  if (!it.at_eof()) return w.unexpected(it.peek(0));
  if (n > cap) {
    err = "too many members in JSON object: " + std::to_string(n) + " (capacity " +
          std::to_string(cap) + ")";
    return ERR_CAPACITY;
  }
  err.clear();
  return int(n);
}

}  // namespace portico_gate
