// Portico request gate: core scanner (no N-API here, so it can be fuzzed/tested standalone).
//
// scan() validates the WHOLE JSON value at body[0, len) (simdjson stage 1 + an On Demand walk of
// every nested value) and writes one record of STRIDE doubles per top-level member:
//   [fieldIndex, keyStart, keyEnd, type, valStart, valEnd, num, flags]
// Offsets are absolute: `base` is added to every offset (nested scans of a sub-object span).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace portico_gate {

constexpr int STRIDE = 8;

enum ValueType : int { T_NULL = 0, T_BOOL = 1, T_NUMBER = 2, T_STRING = 3, T_ARRAY = 4, T_OBJECT = 5 };

enum Flags : int {
  F_STRING_ESCAPED = 1,   // string value contains a backslash escape
  F_INTEGER = 2,          // number has no fraction/exponent
  F_INEXACT = 4,          // number is -0, or |n| >= 2^53 (> Number.MAX_SAFE_INTEGER: may be inexact)
  F_KEY_ESCAPED = 8,      // key contains a backslash escape (matched after unescaping)
};

enum Result : int { ERR_INVALID = -1, ERR_NOT_OBJECT = -2, ERR_CAPACITY = -3 };

// Immutable table of known member names (one object level). Lookup: 256 buckets keyed by
// (length, first byte, last byte); each bucket a short list compared by length + memcmp.
class Table {
 public:
  explicit Table(const std::vector<std::string> &names);
  int lookup(const uint8_t *key, size_t len) const noexcept;
  size_t size() const noexcept { return names_.size(); }

 private:
  static unsigned bucket(const uint8_t *key, size_t len) noexcept;
  struct Entry { uint32_t len; int32_t index; const char *bytes; };
  std::vector<std::string> names_;
  std::vector<Entry> entries_;          // grouped by bucket
  uint32_t start_[257] = {};            // bucket b: entries_[start_[b], start_[b+1])
};

// Scan. `table` may be null (every key reported as -1). `out` holds `cap` records.
// Returns member count, or ERR_*; on error `err` holds a message with an absolute byte offset, and
// `member` (when given) the name of the top-level member whose value is invalid (unescaped; empty
// when the error is not inside one member's value, e.g. a truncated body or a bad key).
int scan(const uint8_t *body, size_t len, size_t base, const Table *table, double *out, size_t cap,
         std::string &err, std::string *member = nullptr);

// Name of the simdjson implementation chosen at runtime for stage 1 (e.g. "haswell").
const char *implementation_name();

}  // namespace portico_gate
