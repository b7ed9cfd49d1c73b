// SPDX-License-Identifier: Apache-2.0
//! Per-layer and global attention parameters (vLLM's get_per_layer_parameters,
//! infer_global_hyperparameters).
//!
//! The C calls' contract, the parity with vLLM, worked examples and the history are in
//! `docs/api/get_per_layer_parameters.md` of the libcattn repository; the items here document the
//! Rust side: types, errors, panics and safety.

use std::mem::size_of;

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;

/// What vLLM reads from one attention layer's impl.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionLayerDesc {
    /// `impl.sliding_window` as `(left, right)`, `None` for no window.
    pub sliding_window: Option<(i64, i64)>,
    /// `impl.logits_soft_cap`.
    pub logits_soft_cap: Option<f64>,
    /// `impl.scale`.
    pub scale: f64,
    /// `impl.sinks is not None`.
    pub has_sinks: bool,
}

impl Default for AttentionLayerDesc {
    /// No window, no soft cap, scale 1, no sinks (`CATTN_ATTENTION_LAYER_DESC_INIT`).
    fn default() -> Self {
        AttentionLayerDesc {
            sliding_window: None,
            logits_soft_cap: None,
            scale: 1.0,
            has_sinks: false,
        }
    }
}

/// vLLM's PerLayerParameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerLayerParameters {
    /// -1 for no sliding window.
    pub window_left: i64,
    /// `None` is not equal to a cap of 0.0.
    pub logits_soft_cap: Option<f64>,
    /// The softmax scale (the layer's `scale`).
    pub sm_scale: f64,
    /// The layer has attention sinks.
    pub has_sinks: bool,
}

/// The global parameters (the first layer's) and vLLM's two flags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlobalHyperparameters {
    /// The first layer's parameters, taken as global.
    pub params: PerLayerParameters,
    /// Every layer's window_left equals the first's.
    pub has_same_window_lefts: bool,
    /// Every layer equals the first in all four fields (dataclass equality: NaN equals
    /// nothing, -0.0 equals 0.0).
    pub has_same_all_params: bool,
}

/// Converts layer descriptions into per-layer parameters, one for one.
///
/// ```
/// use cattn::{get_per_layer_parameters, AttentionLayerDesc};
/// let layers = [AttentionLayerDesc { sliding_window: Some((4095, 0)), scale: 0.125,
///                                    ..Default::default() }];
/// let params = get_per_layer_parameters(&layers)?;
/// assert_eq!(params[0].window_left, 4095);
/// assert_eq!(params[0].logits_soft_cap, None);
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn get_per_layer_parameters(layers: &[AttentionLayerDesc]) -> Result<Vec<PerLayerParameters>> {
    Api::linked()?.get_per_layer_parameters(layers)
}

/// Takes the first layer's parameters as global and says whether every layer shares its
/// window and all its parameters. An empty slice is an error (vLLM asserts "No attention
/// layers found").
///
/// ```
/// use cattn::{infer_global_hyperparameters, PerLayerParameters};
/// let p = PerLayerParameters { window_left: -1, logits_soft_cap: None, sm_scale: 0.125,
///                              has_sinks: false };
/// let g = infer_global_hyperparameters(&[p, PerLayerParameters { sm_scale: 0.5, ..p }])?;
/// assert!(g.has_same_window_lefts && !g.has_same_all_params);
/// assert!(infer_global_hyperparameters(&[]).is_err());
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn infer_global_hyperparameters(
    params: &[PerLayerParameters],
) -> Result<GlobalHyperparameters> {
    Api::linked()?.infer_global_hyperparameters(params)
}

fn flag(b: bool) -> i32 {
    i32::from(b)
}

impl PerLayerParameters {
    fn to_raw(self) -> sys::cattn_per_layer_parameters_t {
        sys::cattn_per_layer_parameters_t {
            struct_size: size_of::<sys::cattn_per_layer_parameters_t>(),
            window_left: self.window_left,
            logits_soft_cap: self.logits_soft_cap.unwrap_or(0.0),
            sm_scale: self.sm_scale,
            has_logits_soft_cap: flag(self.logits_soft_cap.is_some()),
            has_sinks: flag(self.has_sinks),
        }
    }

    fn from_raw(
        window_left: i64,
        has_cap: i32,
        cap: f64,
        sm_scale: f64,
        has_sinks: i32,
    ) -> PerLayerParameters {
        PerLayerParameters {
            window_left,
            logits_soft_cap: (has_cap != 0).then_some(cap),
            sm_scale,
            has_sinks: has_sinks != 0,
        }
    }
}

impl Api<'_> {
    /// [`get_per_layer_parameters`] in this library.
    pub fn get_per_layer_parameters(
        self,
        layers: &[AttentionLayerDesc],
    ) -> Result<Vec<PerLayerParameters>> {
        let raw_layers: Vec<sys::cattn_attention_layer_desc_t> = layers
            .iter()
            .map(|l| {
                let (left, right) = l.sliding_window.unwrap_or((0, 0));
                sys::cattn_attention_layer_desc_t {
                    struct_size: size_of::<sys::cattn_attention_layer_desc_t>(),
                    sliding_window_left: left,
                    sliding_window_right: right,
                    logits_soft_cap: l.logits_soft_cap.unwrap_or(0.0),
                    scale: l.scale,
                    has_sliding_window: flag(l.sliding_window.is_some()),
                    has_logits_soft_cap: flag(l.logits_soft_cap.is_some()),
                    has_sinks: flag(l.has_sinks),
                    reserved0: 0,
                }
            })
            .collect();
        // Every element's struct_size is set: the library uses it as the array's stride.
        let mut raw_out: Vec<sys::cattn_per_layer_parameters_t> = layers
            .iter()
            .map(|_| {
                PerLayerParameters {
                    window_left: -1,
                    logits_soft_cap: None,
                    sm_scale: 1.0,
                    has_sinks: false,
                }
                .to_raw()
            })
            .collect();
        let f = entry!(self, get_per_layer_parameters)?;
        // SAFETY: both arrays hold layers.len() elements of the size their struct_size says
        // and live through the call.
        self.check_in(
            unsafe { f(raw_layers.as_ptr(), layers.len(), raw_out.as_mut_ptr()) },
            "get_per_layer_parameters",
        )?;
        Ok(raw_out
            .iter()
            .map(|p| {
                PerLayerParameters::from_raw(
                    p.window_left,
                    p.has_logits_soft_cap,
                    p.logits_soft_cap,
                    p.sm_scale,
                    p.has_sinks,
                )
            })
            .collect())
    }

    /// [`infer_global_hyperparameters`] in this library.
    pub fn infer_global_hyperparameters(
        self,
        params: &[PerLayerParameters],
    ) -> Result<GlobalHyperparameters> {
        let raw: Vec<sys::cattn_per_layer_parameters_t> =
            params.iter().map(|p| p.to_raw()).collect();
        let mut out = sys::cattn_global_hyperparameters_t {
            struct_size: size_of::<sys::cattn_global_hyperparameters_t>(),
            window_left: 0,
            logits_soft_cap: 0.0,
            sm_scale: 0.0,
            has_logits_soft_cap: 0,
            has_sinks: 0,
            has_same_window_lefts: 0,
            has_same_all_params: 0,
        };
        let f = entry!(self, infer_global_hyperparameters)?;
        // SAFETY: the array holds params.len() elements of their declared size; `out` is valid.
        self.check_in(
            unsafe { f(raw.as_ptr(), params.len(), &mut out) },
            "infer_global_hyperparameters",
        )?;
        Ok(GlobalHyperparameters {
            params: PerLayerParameters::from_raw(
                out.window_left,
                out.has_logits_soft_cap,
                out.logits_soft_cap,
                out.sm_scale,
                out.has_sinks,
            ),
            has_same_window_lefts: out.has_same_window_lefts != 0,
            has_same_all_params: out.has_same_all_params != 0,
        })
    }
}
