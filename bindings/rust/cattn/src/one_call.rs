// SPDX-License-Identifier: Apache-2.0
//! What the one-call helpers share: the conversions between slice lengths (`usize`) and tensor
//! sizes (`i64`), the rows of 2-D inputs and outputs, and the scalars of a batch given as host
//! slices.
//!
//! A one-call helper takes host slices of one [`IndexElement`] type, asks the library for the
//! sizes of its outputs where it has a size query, allocates them, calls the library on the
//! default stream (host tensors run synchronously, so no stream is ever waited on) and returns
//! owned `Vec`s of the same element type.

use crate::error::{Error, Result, Status};
use crate::metadata::MetadataScalars;
use crate::tensor::{Element, IndexElement};

/// A slice's length as a tensor size. A slice spans at most `isize::MAX` bytes, so its length
/// always fits `i64`.
pub(crate) fn len_i64(len: usize) -> i64 {
    len as i64
}

/// A size the library reported for an output (the library validated it: it is never
/// negative, and it counts elements of host memory it has checked) as a `Vec` length.
pub(crate) fn reported_len(function: &str, what: &str, size: i64) -> Result<usize> {
    usize::try_from(size).map_err(|_| {
        Error::new(
            Status::Internal,
            format!("cattn::{function}: the library reported {what} {size}, not a length"),
        )
    })
}

/// `len` zeroes: the storage a helper lets the library write. An allocation that fails (a
/// size no memory holds) is [`Status::OutOfMemory`] in the name of `function`, not an abort.
pub(crate) fn zeroed<T: Element>(function: &str, len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::new(
            Status::OutOfMemory,
            format!(
                "cattn::{function}: cannot allocate an output of {len} elements of {} bytes",
                std::mem::size_of::<T>()
            ),
        )
    })?;
    v.resize(len, T::ZERO);
    Ok(v)
}

/// `rows * cols` as a `Vec` length, refused in the name of `function`'s `argument` when it
/// overflows `usize`.
pub(crate) fn area(function: &str, argument: &str, rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols).ok_or_else(|| {
        Error::argument(
            function,
            argument,
            "is too large",
            format_args!("{rows} x {cols} entries"),
            format_args!("at most {} entries", usize::MAX),
        )
    })
}

/// The rows of a 2-D input as one row-major buffer and its column count. Every row must be as
/// long as the first; a ragged one is refused in the name of `function`'s `argument`.
pub(crate) fn flatten_rows<T: Copy, R: AsRef<[T]>>(
    function: &str,
    argument: &str,
    rows: &[R],
) -> Result<(Vec<T>, usize)> {
    let cols = rows.first().map_or(0, |r| r.as_ref().len());
    let mut flat = Vec::with_capacity(rows.len() * cols);
    for (i, row) in rows.iter().enumerate() {
        let row = row.as_ref();
        if row.len() != cols {
            return Err(Error::argument(
                function,
                &format!("{argument}[{i}]"),
                "is not as long as the first row",
                format_args!("{} entries", row.len()),
                format_args!("{cols} entries"),
            ));
        }
        flat.extend_from_slice(row);
    }
    Ok((flat, cols))
}

/// A row-major buffer of `rows` x `cols` entries as its rows.
pub(crate) fn into_rows<T: Copy>(flat: &[T], rows: usize, cols: usize) -> Vec<Vec<T>> {
    debug_assert_eq!(flat.len(), rows * cols);
    (0..rows)
        .map(|r| flat[r * cols..(r + 1) * cols].to_vec())
        .collect()
}

/// The scalar fields of a batch given as host slices, as the engine would set them: `num_reqs`
/// = B (the length of `seq_lens`, or of `query_start_loc` less one), `num_actual_tokens` =
/// `query_start_loc[B]` (vLLM's batches start at 0), `max_query_len` the longest query,
/// `max_seq_len` the longest sequence (0 without `seq_lens`), `causal` true and nothing else
/// given.
pub(crate) fn batch_scalars<T: IndexElement>(
    query_start_loc: &[T],
    seq_lens: Option<&[T]>,
) -> MetadataScalars {
    let num_reqs = match seq_lens {
        Some(s) => len_i64(s.len()),
        None => len_i64(query_start_loc.len().saturating_sub(1)),
    };
    let max_query_len = query_start_loc
        .windows(2)
        .map(|w| w[1].to_i64().wrapping_sub(w[0].to_i64()))
        .max()
        .unwrap_or(0);
    let max_seq_len = seq_lens
        .and_then(|s| s.iter().map(|&v| v.to_i64()).max())
        .unwrap_or(0);
    MetadataScalars {
        num_reqs,
        num_actual_tokens: query_start_loc.last().map_or(0, |&v| v.to_i64()),
        max_query_len,
        max_seq_len,
        ..MetadataScalars::default()
    }
}
