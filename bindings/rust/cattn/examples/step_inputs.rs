// SPDX-License-Identifier: Apache-2.0
//! examples/step_inputs.c through the one-call host helpers: a step's attention inputs for 6
//! requests (4 decodes with drafts, 2 prefill chunks) over 8 persistent rows and two KV-cache
//! groups (blocks of 16 and 32 tokens), the outputs sized and allocated by the helpers, printed
//! as examples/step_inputs.c prints them.
//!
//!     cargo run --example step_inputs

use cattn::{combine_sampled_and_draft_tokens_host as combine, compute_slot_mappings_host};
use cattn::{SlotMappingParams, StepInputsSizeArgs, TensorRef};

fn show(label: &str, v: &[i64]) {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    println!("{label}{}", s.join(" "));
}

fn main() -> cattn::Result<()> {
    let (sched, drafts) = ([3i64, 1, 4, 2, 20, 12], [2i64, 0, 3, 1, 0, 0]);
    let (idx, computed) = ([5i64, 0, 7, 2, 1, 4], [40i64, 9, 17, 0, 0, 33, 0, 30]);
    let size = cattn::step_inputs_size(&StepInputsSizeArgs {
        num_scheduled_tokens: Some(TensorRef::from_slice(&sched)),
        num_draft_tokens: Some(TensorRef::from_slice(&drafts)),
        ..Default::default()
    })?; // the live tokens and logits: the outputs' sizes
    let step = cattn::prepare_pos_seq_lens_host(&sched, &idx, &computed, None)?;
    let (qsl, pos) = (&step.query_start_loc, &step.positions);
    let (mut gathered, mut slots) = (Vec::new(), Vec::new());
    // Each group's persistent table, [8 rows, 4 blocks], numbered from 100 and from 500.
    for (base, bs) in [(100i64, 16), (500, 32)] {
        let table: Vec<Vec<i64>> = (0..8)
            .map(|r| (0..4).map(|c| base + 4 * r + c).collect())
            .collect();
        gathered.push(cattn::gather_block_tables_host(&idx, None, &table, None)?);
        let p = SlotMappingParams {
            block_size: bs,
            kernel_block_size: bs,
            ..Default::default()
        };
        let s = compute_slot_mappings_host(&p, qsl, None, pos, Some(&idx[..]), &table)?;
        slots.push(s);
    }
    let logits = combine(None, qsl, None, Some(&drafts[..]), None)?;

    println!("libcattn {}", cattn::version_string()?);
    println!("tokens {}, logits {}", size.num_tokens, size.num_logits);
    show("query_start_loc ", qsl);
    show("seq_lens        ", &step.seq_lens);
    show("positions       ", pos);
    show("block table 0   ", &gathered[0].concat());
    show("slots 0         ", &slots[0]);
    show("slots 1         ", &slots[1]);
    show("logits_indices  ", &logits.logits_indices);
    Ok(())
}
