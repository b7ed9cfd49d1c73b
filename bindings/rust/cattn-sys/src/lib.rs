// SPDX-License-Identifier: Apache-2.0
//! Raw FFI of libcattn, generated from `include/cattn.h` by `regenerate.sh` (bindgen CLI).
//!
//! Every item mirrors the C header one to one: read the header for the contract of each call.
//! C enums are plain integer constants (`CATTN_OK`, `kDLCPU`, ...), so that a value from a
//! newer library is never an invalid Rust value. The safe API is the `cattn` crate.
//!
//! Linking: with the default feature `link`, the build script finds `libcattn` through
//! `CATTN_LIB_DIR` or `pkg-config` and links it. Without it (`default-features = false`)
//! nothing is linked: the types and constants are all there, and the functions may only be
//! reached through the table of a library loaded at run time (`cattn_get_api`); calling an
//! extern function directly then fails to link.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![allow(clippy::all)]

include!("bindings.rs");
