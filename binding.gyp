{
  # Portico native C++ addons built by node-gyp (root package.json "install": node-gyp rebuild).
  # portico_gate: the request gate (native/gate) on simdjson 0.9.1 On Demand, compiled from the
  # amalgamation shipped inside the npm `simdjson` package (no system library, no network).
  "targets": [
    {
      "target_name": "portico_gate",
      "default_configuration": "Release",
      "sources": [
        "native/gate/gate.cc",
        "native/gate/gate_core.cc",
        "node_modules/simdjson/simdjson/src/simdjson.cpp"
      ],
      "include_dirs": [
        "native/gate",
        "node_modules/simdjson/simdjson/src"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "SIMDJSON_EXCEPTIONS=0",
        "NDEBUG"
      ],
      "cflags!": ["-fno-exceptions", "-O2", "-O0", "-Os"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++0x", "-std=gnu++1y", "-std=gnu++14", "-std=gnu++17", "-std=c++14", "-O2", "-O0", "-Os"],
      "cflags": ["-O3"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-exceptions", "-fvisibility=hidden", "-Wno-unused-function", "-fno-tree-slp-vectorize"],
      "xcode_settings": {
        "OTHER_CPLUSPLUSFLAGS": ["-O3", "-std=c++17"],
        "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
        "MACOSX_DEPLOYMENT_TARGET": "10.15"
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "AdditionalOptions": ["/std:c++17", "/O2"] }
      }
    }
  ]
}
