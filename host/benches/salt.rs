//! What the secret salt costs the generator (issue 49, class 1): the
//! default config's stream, every op of every thread, generated unsalted
//! and salted, in interleaved rounds; wall and thread CPU time a round,
//! and the median of the salted/unsalted ratios of CPU time. The default
//! run materializes its stream before the clock, so this is time before
//! the first variant, not inside any figure.
//!
//! `cargo bench -p memlab --bench salt [-- ROUNDS]`

use std::time::Instant;

use memlab::config::BenchConfig;
use memlab::workload::{Generator, Op, Profile, Salt};

/// Generates every op of `profile`; returns (rows, wall s, CPU s).
fn generate(profile: &Profile) -> (u64, f64, f64) {
    let (cpu, wall) = (cpu_time::ThreadTime::now(), Instant::now());
    let mut generator = Generator::new(profile);
    let (mut op, mut rows) = (Op::default(), 0u64);
    for thread in 0..profile.threads {
        for index in 0..profile.ops_for(thread) {
            generator.op(thread, index, &mut op);
            rows += op.rows.len() as u64;
        }
    }
    (rows, wall.elapsed().as_secs_f64(), cpu.elapsed().as_secs_f64())
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    let text = include_str!("../../benches/default.toml");
    let profile = BenchConfig::parse("benches/default.toml", text).expect("the default config").workload;
    let salted = Profile { salt: Some("0123456789abcdef0123456789abcdef".parse::<Salt>().expect("a salt")), ..profile.clone() };
    let mut ratios = Vec::new();
    println!("round  rows      unsalted wall/cpu s   salted wall/cpu s   cpu ratio");
    for round in 1..=rounds {
        let (rows, plain_wall, plain_cpu) = generate(&profile);
        let (salted_rows, wall, cpu) = generate(&salted);
        assert_eq!(rows, salted_rows, "a salt changes no shape");
        ratios.push(cpu / plain_cpu);
        println!("{round:>5}  {rows}  {plain_wall:>8.3} / {plain_cpu:<8.3}   {wall:>8.3} / {cpu:<8.3}   {:.2}x", cpu / plain_cpu);
    }
    ratios.sort_by(f64::total_cmp);
    println!("median salted/unsalted CPU: {:.2}x over {rounds} rounds", ratios[rounds / 2]);
}
