// SPDX-License-Identifier: Apache-2.0
//! The KV-cache layout (vLLM's get_kv_cache_layout, is_valid_kv_cache_layout).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/get_kv_cache_layout.md` of the libcattn repository; the items here document the Rust
//! side: types, errors, panics and safety.

use std::ffi::CString;
use std::fmt;
use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, require_same_library, string_from, Api};
use crate::context::Context;
use crate::error::{Error, Result, Status};

/// A KV-cache layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KvCacheLayout {
    /// `[num_blocks, block_size, num_heads, head_dim]`.
    Nhd,
    /// `[num_blocks, num_heads, block_size, head_dim]`.
    Hnd,
}

impl KvCacheLayout {
    /// The layout's name, "NHD" or "HND".
    pub fn name(self) -> &'static str {
        match self {
            KvCacheLayout::Nhd => "NHD",
            KvCacheLayout::Hnd => "HND",
        }
    }

    /// The layout a name denotes: exact and case-sensitive, as vLLM's check.
    pub fn from_name(name: &str) -> Option<KvCacheLayout> {
        match name {
            "NHD" => Some(KvCacheLayout::Nhd),
            "HND" => Some(KvCacheLayout::Hnd),
            _ => None,
        }
    }

    fn to_raw(self) -> sys::cattn_kv_cache_layout_t {
        match self {
            KvCacheLayout::Nhd => sys::CATTN_KV_CACHE_LAYOUT_NHD,
            KvCacheLayout::Hnd => sys::CATTN_KV_CACHE_LAYOUT_HND,
        }
    }

    fn raw_of(layout: Option<KvCacheLayout>) -> sys::cattn_kv_cache_layout_t {
        layout.map_or(sys::CATTN_KV_CACHE_LAYOUT_UNSET, KvCacheLayout::to_raw)
    }
}

impl fmt::Display for KvCacheLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The layouts a backend supports (`supported_mask`); empty means any layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SupportedLayouts(u32);

impl SupportedLayouts {
    /// No restriction.
    pub const ANY: SupportedLayouts = SupportedLayouts(0);

    /// Exactly these layouts.
    pub fn of(layouts: &[KvCacheLayout]) -> SupportedLayouts {
        SupportedLayouts(layouts.iter().fold(0, |m, l| m | (1u32 << l.to_raw())))
    }

    /// The raw mask (`CATTN_KV_CACHE_LAYOUT_BIT` values ORed together).
    pub fn bits(self) -> u32 {
        self.0
    }
}

/// Where the user's setting (vLLM's VLLM_KV_CACHE_LAYOUT) comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UserSetting<'a> {
    /// No user setting.
    #[default]
    Unset,
    /// This text ("NHD" or "HND"; anything else is an error, as vLLM asserts).
    Value(&'a str),
    /// The process environment variable `CATTN_KV_CACHE_LAYOUT` (read with getenv, which races
    /// with a concurrent setenv elsewhere in the process; prefer [`UserSetting::Value`]).
    Environment,
}

/// What [`get_kv_cache_layout`] resolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KvCacheLayoutArgs<'a> {
    /// The backend's layouts.
    pub supported: SupportedLayouts,
    /// The user's setting.
    pub user_setting: UserSetting<'a>,
    /// The KV connector's preference.
    pub connector: Option<KvCacheLayout>,
}

/// Resolves the KV-cache layout with vLLM's precedence: the context's override > the user's
/// setting > the connector's preference > NHD. `ctx` may be `None` (no override).
///
/// Errors: [`Status::InvalidArgument`] for a user setting that is not a layout;
/// [`Status::NotSupported`] when the result is not among `args.supported`.
///
/// ```
/// use cattn::{get_kv_cache_layout, KvCacheLayout, KvCacheLayoutArgs, UserSetting};
/// let mut args = KvCacheLayoutArgs { connector: Some(KvCacheLayout::Hnd), ..Default::default() };
/// assert_eq!(get_kv_cache_layout(None, &args)?, KvCacheLayout::Hnd);
/// args.user_setting = UserSetting::Value("NHD");
/// assert_eq!(get_kv_cache_layout(None, &args)?, KvCacheLayout::Nhd);
/// args.user_setting = UserSetting::Value("nhd");
/// let err = get_kv_cache_layout(None, &args).unwrap_err();
/// assert_eq!(err.status(), cattn::Status::InvalidArgument);
/// assert!(err.message().contains("args->env_value"));
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_kv_cache_layout(
    ctx: Option<&Context<'_>>,
    args: &KvCacheLayoutArgs<'_>,
) -> Result<KvCacheLayout> {
    Api::linked()?.get_kv_cache_layout(ctx, args)
}

/// Whether `value` names a KV-cache layout ("NHD" or "HND", exact and case-sensitive).
///
/// ```
/// assert!(cattn::is_valid_kv_cache_layout("HND")?);
/// assert!(!cattn::is_valid_kv_cache_layout("hnd")?);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn is_valid_kv_cache_layout(value: &str) -> Result<bool> {
    Api::linked()?.is_valid_kv_cache_layout(value)
}

impl Context<'_> {
    /// Sets (`Some`) or clears (`None`) this context's layout override, vLLM's
    /// `_KV_CACHE_LAYOUT_OVERRIDE`; later resolutions see the new value. Any thread may call
    /// it, also while others resolve layouts with the context.
    pub fn set_kv_cache_layout_override(&self, layout: Option<KvCacheLayout>) -> Result<()> {
        let api = self.api();
        let f = entry!(api, context_set_kv_cache_layout_override)?;
        // SAFETY: the context is alive (borrowed) and the layout is a valid enum value.
        api.check_in(
            unsafe { f(self.as_raw(), KvCacheLayout::raw_of(layout)) },
            "Context::set_kv_cache_layout_override",
        )
    }
}

impl<'l> Api<'l> {
    /// [`get_kv_cache_layout`] in this library.
    pub fn get_kv_cache_layout(
        self,
        ctx: Option<&Context<'_>>,
        args: &KvCacheLayoutArgs<'_>,
    ) -> Result<KvCacheLayout> {
        if let Some(ctx) = ctx {
            require_same_library("get_kv_cache_layout", "ctx", self, ctx.api())?;
        }
        let (env_value, read_environment) = match args.user_setting {
            UserSetting::Unset => (None, 0),
            UserSetting::Environment => (None, 1),
            UserSetting::Value(text) => (
                Some(CString::new(text).map_err(|_| {
                    Error::argument(
                        "get_kv_cache_layout",
                        "args.user_setting",
                        "contains a NUL byte",
                        format_args!("{text:?}"),
                        "a layout name (\"NHD\" or \"HND\")",
                    )
                })?),
                0,
            ),
        };
        let mut raw = sys::cattn_kv_cache_layout_args_t {
            struct_size: size_of::<sys::cattn_kv_cache_layout_args_t>(),
            supported_mask: args.supported.bits(),
            read_environment,
            env_value: env_value.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            connector_layout: KvCacheLayout::raw_of(args.connector),
            layout: sys::CATTN_KV_CACHE_LAYOUT_UNSET,
        };
        let f = entry!(self, get_kv_cache_layout)?;
        let ctx = ctx.map_or(std::ptr::null(), |c| c.as_raw().cast_const());
        // SAFETY: `raw` and the string it points to live through the call; ctx is NULL or alive.
        self.check_in(unsafe { f(ctx, &mut raw) }, "get_kv_cache_layout")?;
        match raw.layout {
            sys::CATTN_KV_CACHE_LAYOUT_NHD => Ok(KvCacheLayout::Nhd),
            sys::CATTN_KV_CACHE_LAYOUT_HND => Ok(KvCacheLayout::Hnd),
            other => Err(Error::new(
                Status::Internal,
                format!("cattn: cattn_get_kv_cache_layout resolved to unknown layout {other}"),
            )),
        }
    }

    /// [`is_valid_kv_cache_layout`] in this library.
    pub fn is_valid_kv_cache_layout(self, value: &str) -> Result<bool> {
        // No layout name contains a NUL byte; C would see only the text before it.
        let Ok(value) = CString::new(value) else {
            return Ok(false);
        };
        let f = entry!(self, is_valid_kv_cache_layout)?;
        let mut valid = 0i32;
        // SAFETY: both pointers are valid for the call.
        self.check(unsafe { f(value.as_ptr(), &mut valid) })?;
        Ok(valid != 0)
    }

    /// `cattn_kv_cache_layout_name`: the library's name of a raw layout value, `None` for
    /// values that are not a layout.
    pub fn kv_cache_layout_name(self, raw_layout: u32) -> Result<Option<String>> {
        let f = entry!(self, kv_cache_layout_name)?;
        // SAFETY: takes any value; returns NULL or a static string.
        Ok(unsafe { string_from(f(raw_layout)) })
    }
}
