//! Statistics benchmarks, against baselines measured in the same run: a bootstrap interval of
//! the mean over 113 tasks with 10,000 resamples (percentile and BCa), against
//!
//! - `plain_mean_x10000`: the plain mean of the same 113 values computed 10,000 times, without
//!   resampling (the arithmetic floor: what remains is drawing indices and sorting);
//! - `naive_alloc_modulo`: a naive bootstrap that allocates a vector per resample, draws
//!   indices with `next_u64() % n` and sorts for the percentiles.
//!
//! Run with `cargo bench -p traparena-stats --bench stats`; the ratios are printed at the end.

// This bench prints what it measured and reads where its prepared data lies.
#![allow(clippy::print_stdout, clippy::disallowed_methods)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use traparena_stats::{BootstrapConfig, CiMethod, bootstrap_mean_ci, quantile_sorted};

const TASKS: usize = 113;
const RESAMPLES: u32 = 10_000;
const GROUP: &str = "bootstrap_113_tasks_10000_resamples";

fn out_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("criterion"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/criterion"),
    }
}

/// 113 per-task differences of the shape the reports see (multiples of 1/30).
fn data() -> Vec<f64> {
    (0..TASKS)
        .map(|i| ((i * 37 % 31) as f64 - 18.0) / 30.0)
        .collect()
}

fn plain_means(values: &[f64]) -> f64 {
    let mut acc = 0.0;
    for _ in 0..RESAMPLES {
        let v = black_box(values);
        let mut sum = 0.0;
        for &x in v {
            sum += x;
        }
        acc += sum / v.len() as f64;
    }
    acc
}

fn naive_percentile(values: &[f64], seed: u64) -> (f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = values.len();
    let mut means = Vec::new();
    for _ in 0..RESAMPLES {
        let resample: Vec<f64> = (0..n)
            .map(|_| values[(rng.next_u64() % n as u64) as usize])
            .collect();
        means.push(resample.iter().sum::<f64>() / n as f64);
    }
    means.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (
        quantile_sorted(&means, 0.025),
        quantile_sorted(&means, 0.975),
    )
}

fn bench(c: &mut Criterion, values: &[f64]) {
    let mut g = c.benchmark_group(GROUP);
    g.sample_size(30).measurement_time(Duration::from_secs(5));
    g.bench_function("plain_mean_x10000", |b| {
        b.iter(|| plain_means(black_box(values)))
    });
    g.bench_function("naive_alloc_modulo", |b| {
        b.iter(|| naive_percentile(black_box(values), 7))
    });
    for (id, method) in [("percentile", CiMethod::Percentile), ("bca", CiMethod::Bca)] {
        let cfg = BootstrapConfig {
            method,
            seed: 7,
            ..Default::default()
        };
        g.bench_function(id, |b| {
            b.iter(|| bootstrap_mean_ci(black_box(values), &cfg).unwrap())
        });
    }
    g.finish();
}

fn mean_ns(id: &str) -> Option<f64> {
    let p = out_dir().join(GROUP).join(id).join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

fn main() {
    let values = data();
    let mut c = Criterion::default()
        .output_directory(&out_dir())
        .configure_from_args();
    bench(&mut c, &values);
    c.final_summary();
    println!();
    for (ours, base) in [
        ("percentile", "plain_mean_x10000"),
        ("bca", "plain_mean_x10000"),
        ("percentile", "naive_alloc_modulo"),
        ("bca", "percentile"),
    ] {
        if let (Some(o), Some(b)) = (mean_ns(ours), mean_ns(base)) {
            println!(
                "ratio {GROUP}: {ours}/{base} = {:.2}x ({:.3} ms / {:.3} ms)",
                o / b,
                o / 1e6,
                b / 1e6
            );
        }
    }
}
