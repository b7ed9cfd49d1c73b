//! Raw FFI of libcattn, generated from `include/cattn.h` by `regenerate.sh` (bindgen CLI).
//!
//! Every item mirrors the C header one to one: read the header for the contract of each call.
//! C enums are plain integer constants (`CATTN_OK`, `kDLCPU`, ...), so that a value from a
//! newer library is never an invalid Rust value. The safe API is the `cattn` crate.
//!
//! Linking: the build script finds `libcattn` through `CATTN_LIB_DIR` or `pkg-config`.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![allow(clippy::all)]

include!("bindings.rs");
