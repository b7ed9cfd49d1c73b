// SPDX-License-Identifier: Apache-2.0
//! The six KV-cache layouts of vLLM's `KVCacheLayout` (since 1.1): their properties and
//! strides, `get_supported_kv_cache_layouts`, and `resolve_kv_cache_layout` with the resolved
//! state a [`Context`] keeps (`record_kv_cache_layout`, `get_resolved_kv_cache_layout`).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/kv_cache_layout.md`, `docs/api/get_supported_kv_cache_layouts.md` and
//! `docs/api/resolve_kv_cache_layout.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::ffi::{CStr, CString};
use std::fmt;
use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, require_same_library, Api};
use crate::context::Context;
use crate::error::{Error, Result, Status};

/// One of the six physical layouts of the logical KV-cache shape `[L, B, H, N, C]` (layer,
/// block, head, slot in the block, content). Variants are in vLLM's iteration order, which
/// breaks ties in [`get_supported_kv_cache_layouts`]; `Lbnhc` is the legacy NHD and `Lbhnc` HND.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CacheLayout {
    /// `[L, B, H, N, C]` (HND).
    Lbhnc,
    /// `[L, B, N, H, C]` (NHD).
    Lbnhc,
    /// `[L, H, B, N, C]`.
    Lhbnc,
    /// `[B, L, H, N, C]`.
    Blhnc,
    /// `[B, L, N, H, C]`.
    Blnhc,
    /// `[B, H, L, N, C]`.
    Bhlnc,
}

/// The fixed properties of a layout ([`CacheLayout::properties`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutProperties {
    /// The logical axis at each physical position, outermost first.
    pub stride_order: [i32; 5],
    /// The physical order of the per-layer view `[B, H, N, C]`.
    pub layer_view_order: [i32; 4],
    /// L is outermost.
    pub is_layer_compact: bool,
    /// H, N, C are innermost, in that order.
    pub is_block_contiguous: bool,
    /// L and B are the two outermost: one page is one contiguous run.
    pub is_block_compact: bool,
    /// B is outermost.
    pub is_block_outermost: bool,
    /// FlashInfer's name ("NHD"/"HND"), `None` for LHBNC.
    pub flashinfer_layout: Option<&'static str>,
}

/// The strides of a KV-cache view ([`CacheLayout::strides`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutStrides {
    /// The element stride of each logical axis L, B, H, N, C.
    pub strides: [i64; 5],
    /// The sizes in physical order.
    pub physical_shape: [i64; 5],
    /// L * B * H * N * C.
    pub numel: i64,
}

impl CacheLayout {
    /// The six layouts in vLLM's iteration order.
    pub const ALL: [CacheLayout; 6] = [
        CacheLayout::Lbhnc,
        CacheLayout::Lbnhc,
        CacheLayout::Lhbnc,
        CacheLayout::Blhnc,
        CacheLayout::Blnhc,
        CacheLayout::Bhlnc,
    ];

    /// The canonical name ("LBNHC", never "NHD").
    pub fn name(self) -> &'static str {
        match self {
            CacheLayout::Lbhnc => "LBHNC",
            CacheLayout::Lbnhc => "LBNHC",
            CacheLayout::Lhbnc => "LHBNC",
            CacheLayout::Blhnc => "BLHNC",
            CacheLayout::Blnhc => "BLNHC",
            CacheLayout::Bhlnc => "BHLNC",
        }
    }

    /// The raw `cattn_kv_cache_layout_t` value.
    pub fn to_raw(self) -> sys::cattn_kv_cache_layout_t {
        match self {
            CacheLayout::Lbhnc => sys::CATTN_KV_CACHE_LAYOUT_LBHNC,
            CacheLayout::Lbnhc => sys::CATTN_KV_CACHE_LAYOUT_LBNHC,
            CacheLayout::Lhbnc => sys::CATTN_KV_CACHE_LAYOUT_LHBNC,
            CacheLayout::Blhnc => sys::CATTN_KV_CACHE_LAYOUT_BLHNC,
            CacheLayout::Blnhc => sys::CATTN_KV_CACHE_LAYOUT_BLNHC,
            CacheLayout::Bhlnc => sys::CATTN_KV_CACHE_LAYOUT_BHLNC,
        }
    }

    /// The layout of a raw value, `None` for values that are not one of the six.
    pub fn from_raw(raw: sys::cattn_kv_cache_layout_t) -> Option<CacheLayout> {
        CacheLayout::ALL.into_iter().find(|l| l.to_raw() == raw)
    }

    fn from_library(raw: sys::cattn_kv_cache_layout_t, call: &str) -> Result<CacheLayout> {
        CacheLayout::from_raw(raw).ok_or_else(|| {
            Error::new(
                Status::Internal,
                format!("cattn: {call} returned unknown layout {raw}"),
            )
        })
    }

    /// Parses a name as vLLM's `_layout_from_name`: "NHD" and "HND" are aliases, otherwise one
    /// of the six names, exact and case-sensitive.
    ///
    /// ```
    /// use cattn::CacheLayout;
    /// assert_eq!(CacheLayout::from_name("NHD")?, CacheLayout::Lbnhc);
    /// let err = CacheLayout::from_name("lbnhc").unwrap_err();
    /// assert!(err.message().contains("Valid") || err.message().contains("one of"));
    /// # Ok::<(), cattn::Error>(())
    /// ```
    pub fn from_name(name: &str) -> Result<CacheLayout> {
        Api::linked()?.kv_cache_layout_from_name(name)
    }

    /// The layout's properties (`cattn_kv_cache_layout_get_properties`).
    pub fn properties(self) -> Result<LayoutProperties> {
        Api::linked()?.kv_cache_layout_get_properties(self)
    }

    /// FlashInfer's name of the layout, as vLLM's `get_flashinfer_layout_string`;
    /// [`Status::NotSupported`] for LHBNC.
    pub fn flashinfer_layout_string(self) -> Result<&'static str> {
        Api::linked()?.get_flashinfer_layout_string(self)
    }

    /// The strides of the logical `[L, B, H, N, C]` view of a compact buffer in this layout.
    ///
    /// ```
    /// use cattn::CacheLayout;
    /// let s = CacheLayout::Bhlnc.strides([2, 3, 4, 5, 6])?;
    /// assert_eq!(s.strides, [30, 240, 60, 6, 1]);
    /// # Ok::<(), cattn::Error>(())
    /// ```
    pub fn strides(self, sizes: [i64; 5]) -> Result<LayoutStrides> {
        Api::linked()?.kv_cache_layout_strides(self, sizes)
    }
}

impl fmt::Display for CacheLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Combines one worker's backends' preferences (each `Some(list)`, most preferred first, or
/// `None` for a backend that declares nothing), as vLLM's `get_supported_kv_cache_layouts`.
///
/// ```
/// use cattn::{get_supported_kv_cache_layouts, CacheLayout::*};
/// let got = get_supported_kv_cache_layouts(&[Some(&[Blhnc, Lbhnc][..]), Some(&[Lbnhc, Lbhnc, Blhnc][..])])?;
/// assert_eq!(got, [Blhnc, Lbhnc]);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_supported_kv_cache_layouts(
    backends: &[Option<&[CacheLayout]>],
) -> Result<Vec<CacheLayout>> {
    Api::linked()?.get_supported_kv_cache_layouts(backends)
}

/// The HNC shape of one KV-cache spec: only whether specs differ matters to the resolver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HncShape {
    /// KV heads.
    pub num_heads: i64,
    /// States (token slots) per block.
    pub num_states: i64,
    /// Bytes per page.
    pub page_size_bytes: i64,
}

/// Where the resolver's user setting (vLLM's `VLLM_KV_CACHE_LAYOUT`) comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LayoutSetting<'a> {
    /// No setting.
    #[default]
    Unset,
    /// This name (an alias or one of the six).
    Value(&'a str),
    /// The process environment variable `CATTN_KV_CACHE_LAYOUT`.
    Environment,
}

/// What [`resolve_kv_cache_layout`] reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResolveArgs<'a> {
    /// One list of layout names per worker, most preferred first; the lists must agree.
    pub workers: &'a [&'a [&'a str]],
    /// The KV-cache specs' shapes.
    pub specs: &'a [HncShape],
    /// The user's setting.
    pub setting: LayoutSetting<'a>,
    /// The KV connector's preferred layout name.
    pub connector: Option<&'a str>,
}

/// What [`resolve_kv_cache_layout`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Resolved {
    /// The layout.
    pub layout: CacheLayout,
    /// The connector's layout was not a candidate; the first candidate was used (vLLM warns).
    pub connector_fell_back: bool,
    /// The context already held a layout, which won.
    pub from_preset: bool,
}

/// Resolves one layout for the model with vLLM's precedence and stores it in `ctx` (see
/// `cattn_resolve_kv_cache_layout`).
pub fn resolve_kv_cache_layout(ctx: &Context<'_>, args: &ResolveArgs<'_>) -> Result<Resolved> {
    ctx.api().resolve_kv_cache_layout(ctx, args)
}

/// One-call helper: the layout every worker's `supported` names resolve to, with no specs,
/// setting or connector, in a fresh context.
///
/// ```
/// assert_eq!(cattn::resolve_layout(&["HND", "LBNHC"])?, cattn::CacheLayout::Lbhnc);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn resolve_layout(supported: &[&str]) -> Result<CacheLayout> {
    Api::linked()?.resolve_layout(supported)
}

/// A name for C, refused in the name of `function`'s `argument` when it holds a NUL byte.
fn c_name(function: &str, argument: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| {
        Error::argument(
            function,
            argument,
            "contains a NUL byte",
            format_args!("{s:?}"),
            "a layout name",
        )
    })
}

impl Context<'_> {
    /// Sets (`Some`) or clears (`None`) the context's layout name as written, vLLM's explicit
    /// `cache_config.kv_cache_layout`.
    pub fn set_kv_cache_layout_preset(&self, name: Option<&str>) -> Result<()> {
        let api = self.api();
        let name = name
            .map(|n| c_name("Context::set_kv_cache_layout_preset", "name", n))
            .transpose()?;
        let f = entry!(api, context_set_kv_cache_layout_preset)?;
        // SAFETY: the context is alive; the name is NULL or a NUL-terminated string.
        api.check_in(
            unsafe {
                f(
                    self.as_raw(),
                    name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()),
                )
            },
            "Context::set_kv_cache_layout_preset",
        )
    }

    /// Adopts a layout resolved elsewhere, as vLLM's `record_kv_cache_layout`.
    pub fn record_kv_cache_layout(&self, name: &str) -> Result<()> {
        let api = self.api();
        let name = c_name("Context::record_kv_cache_layout", "name", name)?;
        let f = entry!(api, record_kv_cache_layout)?;
        // SAFETY: the context is alive; the name is NUL-terminated.
        api.check_in(
            unsafe { f(self.as_raw(), name.as_ptr()) },
            "Context::record_kv_cache_layout",
        )
    }

    /// The resolved layout, as vLLM's `CacheConfig.get_resolved_kv_cache_layout`.
    pub fn resolved_kv_cache_layout(&self) -> Result<CacheLayout> {
        let api = self.api();
        let f = entry!(api, get_resolved_kv_cache_layout)?;
        let mut raw = sys::CATTN_KV_CACHE_LAYOUT_UNSET;
        // SAFETY: the context is alive; `raw` is a valid host pointer.
        api.check(unsafe { f(self.as_raw().cast_const(), &mut raw) })?;
        CacheLayout::from_library(raw, "cattn_get_resolved_kv_cache_layout")
    }
}

impl<'l> Api<'l> {
    /// [`resolve_layout`] in this library (the fresh context is one of its own).
    pub fn resolve_layout(self, supported: &[&str]) -> Result<CacheLayout> {
        let ctx = self.context_create()?;
        let workers = [supported];
        let args = ResolveArgs {
            workers: &workers,
            ..Default::default()
        };
        Ok(self.resolve_kv_cache_layout(&ctx, &args)?.layout)
    }

    /// [`CacheLayout::from_name`] in this library.
    pub fn kv_cache_layout_from_name(self, name: &str) -> Result<CacheLayout> {
        let name = c_name("CacheLayout::from_name", "name", name)?;
        let f = entry!(self, kv_cache_layout_from_name)?;
        let mut raw = sys::CATTN_KV_CACHE_LAYOUT_UNSET;
        // SAFETY: both pointers are valid for the call.
        self.check_in(
            unsafe { f(name.as_ptr(), &mut raw) },
            "CacheLayout::from_name",
        )?;
        CacheLayout::from_library(raw, "cattn_kv_cache_layout_from_name")
    }

    /// [`CacheLayout::properties`] in this library.
    pub fn kv_cache_layout_get_properties(self, layout: CacheLayout) -> Result<LayoutProperties> {
        let f = entry!(self, kv_cache_layout_get_properties)?;
        let mut p = sys::cattn_kv_cache_layout_properties_t {
            struct_size: size_of::<sys::cattn_kv_cache_layout_properties_t>(),
            stride_order: [0; 5],
            layer_view_order: [0; 4],
            is_layer_compact: 0,
            is_block_contiguous: 0,
            is_block_compact: 0,
            is_block_outermost: 0,
            order: 0,
            name: std::ptr::null(),
            flashinfer_layout: std::ptr::null(),
        };
        // SAFETY: `p` is a valid, sized struct for the call.
        self.check(unsafe { f(layout.to_raw(), &mut p) })?;
        Ok(LayoutProperties {
            stride_order: p.stride_order,
            layer_view_order: p.layer_view_order,
            is_layer_compact: p.is_layer_compact != 0,
            is_block_contiguous: p.is_block_contiguous != 0,
            is_block_compact: p.is_block_compact != 0,
            is_block_outermost: p.is_block_outermost != 0,
            flashinfer_layout: static_str(p.flashinfer_layout),
        })
    }

    /// [`CacheLayout::flashinfer_layout_string`] in this library.
    pub fn get_flashinfer_layout_string(self, layout: CacheLayout) -> Result<&'static str> {
        let f = entry!(self, get_flashinfer_layout_string)?;
        let mut out = std::ptr::null();
        // SAFETY: `out` is a valid host pointer for the call.
        self.check(unsafe { f(layout.to_raw(), &mut out) })?;
        static_str(out).ok_or_else(|| Error::new(Status::Internal, "cattn: no FlashInfer name"))
    }

    /// [`CacheLayout::strides`] in this library.
    pub fn kv_cache_layout_strides(
        self,
        layout: CacheLayout,
        sizes: [i64; 5],
    ) -> Result<LayoutStrides> {
        let f = entry!(self, kv_cache_layout_strides)?;
        let mut a = sys::cattn_kv_cache_layout_strides_args_t {
            struct_size: size_of::<sys::cattn_kv_cache_layout_strides_args_t>(),
            layout: layout.to_raw(),
            reserved0: 0,
            sizes,
            strides: [0; 5],
            physical_shape: [0; 5],
            numel: 0,
        };
        // SAFETY: `a` is a valid, sized struct for the call.
        self.check_in(unsafe { f(&mut a) }, "CacheLayout::strides")?;
        Ok(LayoutStrides {
            strides: a.strides,
            physical_shape: a.physical_shape,
            numel: a.numel,
        })
    }

    /// [`get_supported_kv_cache_layouts`] in this library.
    pub fn get_supported_kv_cache_layouts(
        self,
        backends: &[Option<&[CacheLayout]>],
    ) -> Result<Vec<CacheLayout>> {
        let counts: Vec<i64> = backends
            .iter()
            .map(|b| {
                b.map_or(i64::from(sys::CATTN_KV_CACHE_LAYOUTS_NONE), |l| {
                    l.len() as i64
                })
            })
            .collect();
        let layouts: Vec<sys::cattn_kv_cache_layout_t> = backends
            .iter()
            .flatten()
            .flat_map(|l| l.iter().map(|x| x.to_raw()))
            .collect();
        let first = backends.iter().flatten().next().map_or(0, |l| l.len());
        let mut out = vec![sys::CATTN_KV_CACHE_LAYOUT_UNSET; first.max(CacheLayout::ALL.len())];
        let mut a = sys::cattn_get_supported_kv_cache_layouts_args_t {
            struct_size: size_of::<sys::cattn_get_supported_kv_cache_layouts_args_t>(),
            num_backends: counts.len() as i64,
            backend_counts: if counts.is_empty() {
                std::ptr::null()
            } else {
                counts.as_ptr()
            },
            layouts: if layouts.is_empty() {
                std::ptr::null()
            } else {
                layouts.as_ptr()
            },
            out: out.as_mut_ptr(),
            out_capacity: out.len() as i64,
            num_out: 0,
        };
        let f = entry!(self, get_supported_kv_cache_layouts)?;
        // SAFETY: the arrays live through the call and hold the counts the struct states.
        self.check(unsafe { f(&mut a) })?;
        out[..a.num_out as usize]
            .iter()
            .map(|&raw| CacheLayout::from_library(raw, "cattn_get_supported_kv_cache_layouts"))
            .collect()
    }

    /// [`resolve_kv_cache_layout`] in this library.
    pub fn resolve_kv_cache_layout(
        self,
        ctx: &Context<'_>,
        args: &ResolveArgs<'_>,
    ) -> Result<Resolved> {
        require_same_library("resolve_kv_cache_layout", "ctx", self, ctx.api())?;
        let counts: Vec<i64> = args.workers.iter().map(|w| w.len() as i64).collect();
        let mut owned: Vec<CString> = Vec::new();
        for (w, names) in args.workers.iter().enumerate() {
            for (i, n) in names.iter().enumerate() {
                let argument = format!("args.workers[{w}][{i}]");
                owned.push(c_name("resolve_kv_cache_layout", &argument, n)?);
            }
        }
        let names: Vec<*const std::os::raw::c_char> = owned.iter().map(|n| n.as_ptr()).collect();
        let heads: Vec<i64> = args.specs.iter().map(|s| s.num_heads).collect();
        let states: Vec<i64> = args.specs.iter().map(|s| s.num_states).collect();
        let pages: Vec<i64> = args.specs.iter().map(|s| s.page_size_bytes).collect();
        let (setting, read_environment) = match args.setting {
            LayoutSetting::Unset => (None, 0),
            LayoutSetting::Environment => (None, 1),
            LayoutSetting::Value(v) => (
                Some(c_name("resolve_kv_cache_layout", "args.setting", v)?),
                0,
            ),
        };
        let connector = args
            .connector
            .map(|c| c_name("resolve_kv_cache_layout", "args.connector", c))
            .transpose()?;
        let ptr_or_null = |v: &Vec<i64>| {
            if v.is_empty() {
                std::ptr::null()
            } else {
                v.as_ptr()
            }
        };
        let mut a = sys::cattn_resolve_kv_cache_layout_args_t {
            struct_size: size_of::<sys::cattn_resolve_kv_cache_layout_args_t>(),
            num_workers: counts.len() as i64,
            worker_counts: ptr_or_null(&counts),
            worker_names: if names.is_empty() {
                std::ptr::null()
            } else {
                names.as_ptr()
            },
            num_specs: heads.len() as i64,
            spec_num_heads: ptr_or_null(&heads),
            spec_num_states: ptr_or_null(&states),
            spec_page_size_bytes: ptr_or_null(&pages),
            env_value: setting.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            read_environment,
            reserved0: 0,
            connector_layout: connector.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            layout: sys::CATTN_KV_CACHE_LAYOUT_UNSET,
            connector_fell_back: 0,
            from_preset: 0,
            reserved1: 0,
        };
        let f = entry!(self, resolve_kv_cache_layout)?;
        // SAFETY: the context is alive; every array and string lives through the call.
        self.check(unsafe { f(ctx.as_raw(), &mut a) })?;
        Ok(Resolved {
            layout: CacheLayout::from_library(a.layout, "cattn_resolve_kv_cache_layout")?,
            connector_fell_back: a.connector_fell_back != 0,
            from_preset: a.from_preset != 0,
        })
    }
}

fn static_str(p: *const std::os::raw::c_char) -> Option<&'static str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the library returns NULL or a static NUL-terminated ASCII string.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}
