{
  # uWebSockets.js for Portico's HTTP layer, compiled for the Node.js that runs node-gyp
  # (the addon is written against V8, not N-API, so each Node ABI needs its own build).
  # Sources come unmodified from two pinned registry packages, linked into deps/ by build.mjs:
  #   deps/uWebSockets  uWebSockets v20.58.0 + uSockets (crates.io libuwebsockets-sys 0.0.10)
  #   deps/addon        the uWebSockets.js addon (npm uwebsockets 3.0.6, src/)
  # Same defines as upstream's Linux build (libuv eventing inside Node's loop, PROXY protocol
  # support) except: no TLS (Portico serves plain HTTP; TLS ends at the proxy) and no HTTP/3
  # (src/no_http3.c). See README.md.
  "targets": [
    {
      "target_name": "uws",
      "default_configuration": "Release",
      "sources": [
        "deps/addon/addon.cpp",
        "deps/uWebSockets/uSockets/src/bsd.c",
        "deps/uWebSockets/uSockets/src/context.c",
        "deps/uWebSockets/uSockets/src/loop.c",
        "deps/uWebSockets/uSockets/src/socket.c",
        "deps/uWebSockets/uSockets/src/udp.c",
        "deps/uWebSockets/uSockets/src/eventing/libuv.c",
        "src/no_http3.c"
      ],
      "include_dirs": [
        "deps/uWebSockets/src",
        "deps/uWebSockets/uSockets/src"
      ],
      "defines": [
        "LIBUS_USE_LIBUV",
        "LIBUS_NO_SSL",
        "LIBUS_USE_QUIC",
        "UWS_WITH_PROXY"
      ],
      "cflags!": ["-O2", "-O0", "-Os", "-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-O2", "-O0", "-Os", "-fno-exceptions", "-fno-rtti"],
      "cflags": ["-O3", "-flto", "-pthread"],
      "cflags_cc": ["-O3", "-flto", "-pthread", "-include", "<(module_root_dir)/src/v8_this.h", "-Wno-deprecated-declarations"],
      "ldflags": ["-O3", "-flto", "-pthread"]
    }
  ]
}
