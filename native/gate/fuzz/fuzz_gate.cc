// Standalone sanitizer fuzz driver for the gate core (not part of the addon build).
//   g++ -std=c++17 -O1 -g -fsanitize=address,undefined -DSIMDJSON_EXCEPTIONS=0 \
//     -I native/gate -I node_modules/simdjson/simdjson/src native/gate/fuzz/fuzz_gate.cc \
//     native/gate/gate_core.cc node_modules/simdjson/simdjson/src/simdjson.cpp -o /tmp/fuzz_gate
//   /tmp/fuzz_gate [iterations] [seed]
// Also usable as a libFuzzer target (-fsanitize=fuzzer, define GATE_LIBFUZZER).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gate_core.h"

static portico_gate::Table *table() {
  static portico_gate::Table t({"model", "messages", "stream", "max_tokens", "temperature", "nvext"});
  return &t;
}

static void one(const uint8_t *data, size_t size) {
  // exact-size heap copy so ASan catches any read past the caller's bytes
  uint8_t *copy = static_cast<uint8_t *>(std::malloc(size ? size : 1));
  if (size) std::memcpy(copy, data, size);
  double out[8 * 16];
  std::string err;
  int n = portico_gate::scan(copy, size, 0, table(), out, 16, err);
  if (n > 0) {
    for (int i = 0; i < n && i < 16; i++) {
      const double *r = out + 8 * i;
      if (!(r[1] <= r[2] && r[2] < r[4] && r[4] <= r[5] && r[5] <= double(size))) {
        std::fprintf(stderr, "bad span\n");
        std::abort();
      }
      if (r[3] == 4 || r[3] == 5) {  // nested containers must scan too (objects) or be valid
        if (r[3] == 5) {
          double o2[8 * 16];
          std::string e2;
          int m = portico_gate::scan(copy + size_t(r[4]), size_t(r[5] - r[4]), size_t(r[4]), table(), o2, 16, e2);
          if (m < 0 && m != portico_gate::ERR_CAPACITY) { std::fprintf(stderr, "nested rescan failed: %s\n", e2.c_str()); std::abort(); }
        }
      }
    }
  } else if (n < 0 && err.empty()) {
    std::fprintf(stderr, "error without message\n");
    std::abort();
  }
  std::free(copy);
}

#ifdef GATE_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { one(data, size); return 0; }
#else
int main(int argc, char **argv) {
  long iters = argc > 1 ? std::atol(argv[1]) : 200000;
  std::mt19937_64 rng(argc > 2 ? std::atol(argv[2]) : 1);
  std::vector<std::string> seeds = {
      R"({"model":"m","messages":[{"role":"system","content":"be \"brief\"\n"},{"role":"user","content":"hi \u00e9 \ud83d\ude80"}],"stream":true,"max_tokens":16,"temperature":0.7,"nvext":{"top_k":4,"x":[1,-0,2.5e-3,null,true,false,{}]}})",
      R"({"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number"}}}}}],"n":1})",
      "{ \"a\" : [ [ ] , { } ] , \"b\" : 12345678901234567890 }",
  };
  const char alphabet[] = "{}[]\":,\\ \n\t0123456789-+.eEtruefalsnul\"abu\x01\xff\xc3\xa9\xed\xa0";
  for (long i = 0; i < iters; i++) {
    std::string s;
    if (i % 3 == 0) {
      size_t len = rng() % 64;
      for (size_t j = 0; j < len; j++)
        s.push_back((rng() & 3) == 0 ? char(rng() & 0xff) : alphabet[rng() % (sizeof alphabet - 1)]);
      if ((rng() & 1) && len > 1) { s[0] = '{'; s[len - 1] = '}'; }
    } else {
      s = seeds[rng() % seeds.size()];
      int k = 1 + rng() % 4;
      for (int m = 0; m < k && !s.empty(); m++) {
        size_t at = rng() % s.size();
        switch (rng() % 4) {
          case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
          case 1: s.erase(at, 1); break;
          case 2: s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
          default: s.resize(at); break;
        }
      }
    }
    one(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  }
  std::printf("ok %ld inputs\n", iters);
  return 0;
}
#endif
