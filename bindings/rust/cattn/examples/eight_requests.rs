// SPDX-License-Identifier: Apache-2.0
//! One batch of eight requests through four utilities, each in one call of its helper: host
//! slices in, owned Vecs out, no size query, allocation or stream of the caller's.
//!
//!     cargo run --example eight_requests

use cattn::{
    causal_conv1d_metadata, dcp_local_seq_lens_all_ranks, local_attention_virtual_batches,
    pcp_query_restore_idx,
};

fn main() -> cattn::Result<()> {
    // Two decodes, then prefills and chunked prefills; every query of more than one token is
    // even, as PCP splits each into halves.
    let query_lens = [1i32, 1, 4, 6, 8, 2, 10, 12];
    let seq_lens = [17i32, 9, 4, 30, 8, 66, 10, 40];
    let query_start_loc: Vec<i32> = std::iter::once(0)
        .chain(query_lens.iter().scan(0, |end, len| {
            *end += len;
            Some(*end)
        }))
        .collect();
    // Block r, page c is 100 * r + c: 17 pages of 4 tokens hold the longest sequence.
    let block_table: Vec<Vec<i32>> = (0..8)
        .map(|r| (0..17).map(|c| 100 * r + c).collect())
        .collect();
    println!("query_start_loc = {query_start_loc:?}");
    println!("seq_lens        = {seq_lens:?}");

    let restore = pcp_query_restore_idx(&query_start_loc)?;
    println!(
        "\nPCP restore index ({} entries):\n  {restore:?}",
        restore.len()
    );

    let dcp = dcp_local_seq_lens_all_ranks(&seq_lens, 2, 4)?;
    println!("\nDCP lengths, 2 ranks, runs of 4 tokens ([rank 0, rank 1] per request):");
    println!("  {dcp:?}");

    let conv1d = causal_conv1d_metadata(&query_start_loc, 8)?;
    println!(
        "\ncausal-conv1d metadata, block_m 8 ({} programs):",
        conv1d.mlist.len()
    );
    println!("  nums       = {:?}", conv1d.nums);
    println!("  mlist      = {:?}", conv1d.mlist);
    println!("  offsetlist = {:?}", conv1d.offsetlist);
    let tot = conv1d.mlist.len();
    println!(
        "  batch_ptr  = {:?} then {} x {} (capacity {})",
        &conv1d.batch_ptr[..tot],
        conv1d.batch_ptr.len() - tot,
        cattn::PAD_SLOT_ID,
        conv1d.batch_ptr.len()
    );

    let local = local_attention_virtual_batches(&query_start_loc, &seq_lens, &block_table, 8, 4)?;
    println!(
        "\nlocal-attention virtual batches, chunks of 8 tokens, blocks of 4 ({} batches):",
        local.scalars.num_reqs
    );
    println!("  query_start_loc     = {:?}", local.query_start_loc);
    println!("  seq_lens            = {:?}", local.seq_lens);
    println!("  num_computed_tokens = {:?}", local.num_computed_tokens);
    println!("  block_table         = {:?}", local.block_table);
    println!(
        "  max_query_len {}, max_seq_len {}",
        local.scalars.max_query_len, local.scalars.max_seq_len
    );
    Ok(())
}
