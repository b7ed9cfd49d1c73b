// SPDX-License-Identifier: Apache-2.0
//! The entries a step's per-token and per-logit outputs need, counted as the step-input calls
//! count them (`cattn_step_inputs_size`, since 1.2).
//!
//! The per-token outputs (positions, slot mappings) need an entry per live token, the per-logit
//! ones (logits indices, the expanded map) an entry per logit; the library counts both from host
//! copies of the counts, with the calls' own refusals, so that no caller sizes its outputs with
//! arithmetic of its own. The one-call helpers of the step inputs size their results with it.
//!
//! The C call's contract is in `docs/api/step_inputs.md` ("Sizing the outputs") of the libcattn
//! repository; the items here document the Rust side.

use cattn_sys as sys;

use crate::api::{entry, Api};
use crate::error::Result;
use crate::tensor::{raw_in, TensorRef};

/// The inputs of [`step_inputs_size`] (`cattn_step_inputs_size_args_t`): int32/int64 host
/// tensors of one batch of B rows. Exactly one of `num_scheduled_tokens` and `query_start_loc`
/// is given; `Default` is the header's initialiser (every tensor `None`).
#[derive(Clone, Debug, Default)]
pub struct StepInputsSizeArgs<'a> {
    /// Logits per row besides its drafts, 0 or 1, as the combine call's; `None` = the header's
    /// default (1).
    pub num_new_sampled_tokens: Option<i64>,
    /// `[B]`: the scheduled counts, as [`crate::prepare_pos_seq_lens()`] reads them; `None`
    /// with `query_start_loc`.
    pub num_scheduled_tokens: Option<TensorRef<'a>>,
    /// `[B + 1]` starting at 0, as [`crate::combine_sampled_and_draft_tokens()`] reads it;
    /// `None` with `num_scheduled_tokens`.
    pub query_start_loc: Option<TensorRef<'a>>,
    /// Optional `[1]`: the live rows in `[0, B]` (refused outside); `None` = B.
    pub num_reqs: Option<TensorRef<'a>>,
    /// Optional `[B]`: drafts per row; `None` = no draft.
    pub num_draft_tokens: Option<TensorRef<'a>>,
}

/// What [`step_inputs_size`] reports: the lengths a step's outputs need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StepInputsSize {
    /// The live rows' tokens: the entries of positions and slot mappings.
    pub num_tokens: i64,
    /// Their logits, `num_new_sampled_tokens + num_draft_tokens[b]` each: the entries of
    /// logits indices and the expanded map.
    pub num_logits: i64,
}

/// Counts the live rows' tokens and logits as the step-input calls count them
/// (`cattn_step_inputs_size`, since 1.2), from host tensors; allocates nothing.
///
/// Errors: [`crate::Status::InvalidArgument`] for a malformed argument, both or neither of
/// `num_scheduled_tokens` and `query_start_loc`, a device tensor, or a value the calls refuse (a
/// negative count, `num_reqs` outside `[0, B]`, a decreasing `query_start_loc`, a total past
/// `i64`), the message naming the field (`args.num_reqs`).
///
/// ```
/// use cattn::{step_inputs_size, StepInputsSize, StepInputsSizeArgs, TensorRef};
/// // Rows 0 to 2 of 4 live: 3 + 1 + 4 tokens, one sampled token a row and 2 + 0 + 3 drafts.
/// let (sched, live, drafts) = ([3i32, 1, 4, 9], [3i64], [2i32, 0, 3, 7]);
/// let n = step_inputs_size(&StepInputsSizeArgs {
///     num_scheduled_tokens: Some(TensorRef::from_slice(&sched)),
///     num_reqs: Some(TensorRef::from_slice(&live)),
///     num_draft_tokens: Some(TensorRef::from_slice(&drafts)),
///     ..Default::default()
/// })?;
/// assert_eq!(n, StepInputsSize { num_tokens: 8, num_logits: 8 });
/// # Ok::<(), cattn::Error>(())
/// ```
pub fn step_inputs_size(args: &StepInputsSizeArgs<'_>) -> Result<StepInputsSize> {
    Api::linked()?.step_inputs_size(args)
}

impl Api<'_> {
    /// [`step_inputs_size`] in this library.
    pub fn step_inputs_size(self, args: &StepInputsSizeArgs<'_>) -> Result<StepInputsSize> {
        let init = sys::CATTN_STEP_INPUTS_SIZE_ARGS_INIT;
        let mut raw = sys::cattn_step_inputs_size_args_t {
            num_new_sampled_tokens: args
                .num_new_sampled_tokens
                .unwrap_or(init.num_new_sampled_tokens),
            num_scheduled_tokens: raw_in(args.num_scheduled_tokens.as_ref()),
            query_start_loc: raw_in(args.query_start_loc.as_ref()),
            num_reqs: raw_in(args.num_reqs.as_ref()),
            num_draft_tokens: raw_in(args.num_draft_tokens.as_ref()),
            ..init
        };
        let f = entry!(self, step_inputs_size)?;
        // SAFETY: the views live through the call; `raw` is ours, its two counts written.
        self.check_in(unsafe { f(&mut raw) }, "step_inputs_size")?;
        Ok(StepInputsSize {
            num_tokens: raw.num_tokens,
            num_logits: raw.num_logits,
        })
    }
}
