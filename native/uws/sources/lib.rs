// Empty: this package exists only to pin libuwebsockets-sys's sources (see Cargo.toml).
