// Portico request gate: N-API binding (plain N-API, no exceptions). Thin: argument checks and
// typed-array access only; all logic lives in gate_core.cc.
//
//   createTable(names: string[]): number
//   scan(body: Uint8Array, start: number, end: number, table: number, out: Float64Array): number
//   lastError(): string
//   lastErrorMember(): string  (the top-level member whose value is invalid, or '')
//   implementation(): string   (simdjson stage-1 kernel picked at runtime, e.g. "haswell")
//
// Programmer errors (wrong argument types, out-of-range start/end, unknown table) throw;
// data errors (bad JSON, not an object, too many members) are returned as negative codes.
#include <node_api.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "gate_core.h"

namespace {

using portico_gate::Table;

// Tables are immutable once published and live for the process (a handful per server), so reads
// from any thread need no lock. Creation is serialized.
constexpr int MAX_TABLES = 4096;
std::atomic<Table *> g_tables[MAX_TABLES];
std::atomic<int> g_table_count{0};
std::mutex g_table_mutex;

thread_local std::string tls_error;
thread_local std::string tls_error_member;

#define CHECK_NAPI(call)                                        \
  do {                                                          \
    if ((call) != napi_ok) {                                    \
      napi_throw_error(env, nullptr, "portico_gate: N-API call failed: " #call); \
      return nullptr;                                           \
    }                                                           \
  } while (0)

napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, nullptr, msg);
  return nullptr;
}

napi_value throw_range(napi_env env, const char *msg) {
  napi_throw_range_error(env, nullptr, msg);
  return nullptr;
}

napi_value CreateTable(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  bool is_array = false;
  if (argc < 1 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array)
    return throw_type(env, "createTable(names): names must be an array of strings");
  uint32_t n = 0;
  CHECK_NAPI(napi_get_array_length(env, argv[0], &n));
  std::vector<std::string> names;
  names.reserve(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    CHECK_NAPI(napi_get_element(env, argv[0], i, &el));
    size_t len = 0;
    if (napi_get_value_string_utf8(env, el, nullptr, 0, &len) != napi_ok)
      return throw_type(env, "createTable(names): names must be an array of strings");
    std::string s(len, '\0');
    CHECK_NAPI(napi_get_value_string_utf8(env, el, &s[0], len + 1, &len));
    names.push_back(std::move(s));
  }
  int id;
  {
    std::lock_guard<std::mutex> lock(g_table_mutex);
    id = g_table_count.load(std::memory_order_relaxed);
    if (id >= MAX_TABLES) return throw_range(env, "createTable: too many tables");
    g_tables[id].store(new Table(names), std::memory_order_release);
    g_table_count.store(id + 1, std::memory_order_release);
  }
  napi_value result;
  CHECK_NAPI(napi_create_int32(env, id, &result));
  return result;
}

bool get_index(napi_env env, napi_value v, double &out) {
  if (napi_get_value_double(env, v, &out) != napi_ok) return false;
  return std::isfinite(out) && out >= 0 && std::floor(out) == out;
}

napi_value Scan(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 5) return throw_type(env, "scan(body, start, end, table, out): 5 arguments required");

  napi_typedarray_type body_type, out_type;
  size_t body_len = 0, out_len = 0;
  void *body_data = nullptr, *out_data = nullptr;
  if (napi_get_typedarray_info(env, argv[0], &body_type, &body_len, &body_data, nullptr, nullptr) != napi_ok ||
      body_type != napi_uint8_array)
    return throw_type(env, "scan: body must be a Uint8Array (Buffer)");
  if (napi_get_typedarray_info(env, argv[4], &out_type, &out_len, &out_data, nullptr, nullptr) != napi_ok ||
      out_type != napi_float64_array)
    return throw_type(env, "scan: out must be a Float64Array");

  double start, end;
  if (!get_index(env, argv[1], start) || !get_index(env, argv[2], end) || start > end ||
      end > double(body_len))
    return throw_range(env, "scan: need integers 0 <= start <= end <= body.length");

  int32_t table_id;
  if (napi_get_value_int32(env, argv[3], &table_id) != napi_ok)
    return throw_type(env, "scan: table must be a table id from createTable()");
  const Table *table = nullptr;
  if (table_id >= 0) {
    if (table_id >= g_table_count.load(std::memory_order_acquire))
      return throw_range(env, "scan: unknown table id");
    table = g_tables[table_id].load(std::memory_order_acquire);
  }  // table -1: no table, every key reported as unknown (-1)

  const uint8_t *body = static_cast<const uint8_t *>(body_data);
  size_t s = size_t(start), e = size_t(end);
  int r = portico_gate::scan(body ? body + s : reinterpret_cast<const uint8_t *>(""), e - s, s, table,
                             static_cast<double *>(out_data), out_len / portico_gate::STRIDE,
                             tls_error, &tls_error_member);
  napi_value result;
  CHECK_NAPI(napi_create_int32(env, r, &result));
  return result;
}

napi_value LastError(napi_env env, napi_callback_info) {
  napi_value result;
  CHECK_NAPI(napi_create_string_utf8(env, tls_error.data(), tls_error.size(), &result));
  return result;
}

napi_value LastErrorMember(napi_env env, napi_callback_info) {
  napi_value result;
  CHECK_NAPI(napi_create_string_utf8(env, tls_error_member.data(), tls_error_member.size(), &result));
  return result;
}

napi_value Implementation(napi_env env, napi_callback_info) {
  napi_value result;
  CHECK_NAPI(napi_create_string_utf8(env, portico_gate::implementation_name(), NAPI_AUTO_LENGTH, &result));
  return result;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"createTable", nullptr, CreateTable, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"scan", nullptr, Scan, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"lastError", nullptr, LastError, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"lastErrorMember", nullptr, LastErrorMember, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
      {"implementation", nullptr, Implementation, nullptr, nullptr, nullptr, napi_enumerable, nullptr},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return nullptr;
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
