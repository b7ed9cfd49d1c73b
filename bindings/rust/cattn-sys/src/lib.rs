// SPDX-License-Identifier: Apache-2.0
//! Raw FFI of libcattn, generated from `include/cattn.h` by `regenerate.sh` (bindgen CLI).
//!
//! Every item mirrors the C header one to one, and bindgen copies the header's Doxygen comments
//! (`/** ... */`, `/**< ... */`) onto the items as their documentation: the contract of each
//! call. Its explanation, every rule and status, the parity with vLLM, worked examples and the
//! history are in the libcattn repository's `docs/api/<utility>.md` pages (index:
//! `docs/api/README.md`). The `CATTN_*` constants of `#define`s carry the Doxygen comment of
//! their macro, and DLPack's items a short line (`add_docs.py`, which `regenerate.sh` runs):
//! every item is documented, and the crate denies missing documentation. The header's struct
//! initialisers (`CATTN_<X>_INIT`, brace lists bindgen skips) are constants of the generated
//! structs (`init_consts.py`): `CATTN_COMPUTE_SLOT_MAPPINGS_ARGS_INIT.dcp_size` is the header's
//! default.
//! C enums are plain integer constants (`CATTN_OK`, `kDLCPU`, ...), so that a value from a
//! newer library is never an invalid Rust value. The safe API is the `cattn` crate.
//!
//! Linking: with the default feature `link`, the build script finds `libcattn` through
//! `CATTN_LIB_DIR` or `pkg-config` and links it. Without it (`default-features = false`)
//! nothing is linked: the types and constants are all there, and the functions may only be
//! reached through the table of a library loaded at run time (`cattn_get_api`); calling an
//! extern function directly then fails to link.

#![deny(missing_docs)]
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
#![allow(clippy::all)]
// The generated documentation is the C header's text, not rustdoc Markdown: a `[in]` or a
// `<name>` in it is not a link or an HTML tag.
#![allow(
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]

include!("bindings.rs");
