// SPDX-License-Identifier: Apache-2.0
//! One batch of 8 requests through four one-call helpers (host slices in, owned Vecs out): the
//! PCP restore index, every DCP rank's lengths, the causal-conv1d metadata and the
//! local-attention virtual batches, printed as examples/eight_requests.cpp prints them.
//!
//!     cargo run --example eight_requests

fn main() -> cattn::Result<()> {
    // Query lengths 1 1 4 6 2 8 1 10: three decodes, the rest prefill chunks of their sequences.
    let query_start_loc = [0i32, 1, 2, 6, 12, 14, 22, 23, 33];
    let seq_lens = [9i32, 17, 4, 10, 34, 8, 5, 12];
    // [8 requests, 9 blocks of 4 tokens], numbered 0, 1, 2, ... row by row.
    let block_table: Vec<Vec<i32>> = (0..8).map(|r| (9 * r..9 * r + 9).collect()).collect();

    let restore = cattn::pcp_query_restore_idx(&query_start_loc)?;
    let dcp = cattn::dcp_local_seq_lens_all_ranks(&seq_lens, 2, 1)?;
    let conv = cattn::causal_conv1d_metadata(&query_start_loc, 8)?;
    let tot = conv.mlist.len(); // programs: mlist and offsetlist hold one entry each
    let local =
        cattn::local_attention_virtual_batches(8, 4, &query_start_loc, &seq_lens, &block_table)?;

    println!("libcattn {}", cattn::version_string()?);
    println!("pcp restore_idx  {restore:?}");
    println!("dcp lens [B, 2]  {dcp:?}");
    println!("conv1d nums      {:?} (tot {tot})", conv.nums);
    println!("conv1d mlist     {:?}", conv.mlist);
    println!("conv1d offsets   {:?}", conv.offsetlist);
    println!("conv1d batch_ptr {} entries", conv.batch_ptr.len());
    println!("local cu_q       {:?}", local.query_start_loc);
    println!("local k lens     {:?}", local.seq_lens);
    println!("local table      {:?}", local.block_table);
    Ok(())
}
