//! Instruction counts per crossing, by argument shape, for callgrind:
//!   valgrind --tool=callgrind --toggle-collect='crossing_cost::shape_*' \
//!       target/release/examples/crossing_cost
//! then `callgrind_annotate --inclusive=yes` shows each `shape_*` function's
//! total for CALLS calls (a batch of 10 rows of 100 bytes).

use std::hint::black_box;

use memlab::plugin::{AbiProbe, EngineSettings, PluginHost};

const CALLS: usize = 10_000;
const ROWS: usize = 10;

#[inline(never)]
fn shape_nothing(probe: &mut AbiProbe) {
    for _ in 0..CALLS {
        black_box(probe.take_nothing().expect("call"));
    }
}

#[inline(never)]
fn shape_flat(probe: &mut AbiProbe, data: &[u8]) {
    for _ in 0..CALLS {
        black_box(probe.take_flat(black_box(data)).expect("call"));
    }
}

#[inline(never)]
fn shape_packed(probe: &mut AbiProbe, data: &[u8], ends: &[u32]) {
    for _ in 0..CALLS {
        black_box(probe.take_packed(black_box(data), black_box(ends)).expect("call"));
    }
}

#[inline(never)]
fn shape_list_of_lists(probe: &mut AbiProbe, rows: &[Vec<u8>]) {
    for _ in 0..CALLS {
        black_box(probe.take_list(black_box(rows)).expect("call"));
    }
}

fn main() {
    let host = PluginHost::new(EngineSettings::default()).expect("engine");
    let mut probe = host.abi_probe().expect("probe");
    let rows: Vec<Vec<u8>> = (0..ROWS).map(|i| vec![i as u8; 100]).collect();
    let data = rows.concat();
    let ends: Vec<u32> = (1..=ROWS as u32).map(|i| i * 100).collect();
    shape_nothing(&mut probe);
    shape_flat(&mut probe, &data);
    shape_packed(&mut probe, &data, &ends);
    shape_list_of_lists(&mut probe, &rows);
    println!("{CALLS} calls of each shape, {ROWS} rows of 100 bytes");
}
