//! The power calculation against closed-form cases and its own seeded simulation.

use traparena_stats::*;

/// z_{0.975} + z_{0.8}, squared.
const K2: f64 = 7.848_879_734_349_086;

#[test]
fn textbook_paired_sample_size() {
    // Paired z test, σ_d = 1, Δ = 0.5, two-sided α = 0.05, power 0.8: n = 31.4 (so 32).
    let n = normal_sample_size(1.0, 0.5, 0.05, 0.8).unwrap();
    assert!((n - 4.0 * K2).abs() < 1e-9, "{n}");
    assert!((n - 31.395_5).abs() < 1e-3);
    // Sign of Δ and units do not matter.
    assert_eq!(n, normal_sample_size(100.0, -50.0, 0.05, 0.8).unwrap());
}

#[test]
fn required_tasks_follows_the_binomial_model_in_closed_form() {
    // One episode per task and condition, no heterogeneity: σ² = p0 q0 + p1 q1.
    let m = PowerModel {
        base_rate: 0.5,
        samples_base: 1,
        samples_attacked: 1,
        ..Default::default()
    };
    let r = required_tasks(&m, -10.0).unwrap();
    let expected = K2 * (0.25 + 0.4 * 0.6) / 0.01;
    assert!((r.exact - expected).abs() < 1e-9, "{r:?}");
    assert_eq!(r.tasks, 385);
    assert!((r.sd_difference_pp - 70.0).abs() < 1e-9);

    // Defaults (3 base, 10 attacked samples) with heterogeneity:
    // σ² = (1 − 0.3)(0.6·0.4/3 + 0.45·0.55/10) + 0.1².
    let m = PowerModel {
        base_rate: 0.6,
        icc: 0.3,
        effect_sd_pp: 10.0,
        ..Default::default()
    };
    let r = required_tasks(&m, -15.0).unwrap();
    let var = 0.7 * (0.24 / 3.0 + 0.45 * 0.55 / 10.0) + 0.01;
    assert!((r.exact - K2 * var / 0.0225).abs() < 1e-9, "{r:?}");
    assert_eq!(r.tasks, 30);
    // At the exact n the normal power is the requested power.
    let p = normal_power(&m, -15.0, 30).unwrap();
    assert!((0.8..0.82).contains(&p), "{p}");
}

#[test]
fn detectable_delta_inverts_required_tasks() {
    let m = PowerModel {
        base_rate: 0.7,
        icc: 0.2,
        effect_sd_pp: 5.0,
        ..Default::default()
    };
    for tasks in [20u64, 50, 113, 400] {
        let d = detectable_delta(&m, tasks, EffectDirection::Harm).unwrap();
        assert!(d < 0.0);
        let back = required_tasks(&m, d).unwrap();
        assert!(
            (back.exact - tasks as f64).abs() < 1e-6,
            "{tasks}: {d} -> {back:?}"
        );
        let up = detectable_delta(&m, tasks, EffectDirection::Benefit).unwrap();
        assert!(up > 0.0);
        assert!((required_tasks(&m, up).unwrap().exact - tasks as f64).abs() < 1e-6);
    }
    // More tasks, smaller detectable effect.
    let d50 = detectable_delta(&m, 50, EffectDirection::Harm).unwrap();
    let d113 = detectable_delta(&m, 113, EffectDirection::Harm).unwrap();
    assert!(d113.abs() < d50.abs());
}

#[test]
fn simulation_with_the_bootstrap_rule_agrees_with_the_normal_model() {
    let m = PowerModel {
        base_rate: 0.6,
        icc: 0.2,
        effect_sd_pp: 5.0,
        ..Default::default()
    };
    let tasks = required_tasks(&m, -20.0).unwrap().tasks;
    let sim = SimulationConfig {
        simulations: 400,
        resamples: 1_000,
        seed: 2025,
    };
    let s = simulate_power(&m, -20.0, tasks, &sim).unwrap();
    println!("{tasks} tasks: {s:?}");
    assert_eq!(s.simulations, 400);
    assert!(s.low <= s.power && s.power <= s.high);
    assert!(
        (s.power - s.normal_power).abs() < 0.08,
        "{tasks} tasks: simulated {s:?}"
    );
    // No effect: the rule's false-positive rate is about α.
    let null = simulate_power(&m, 0.0, tasks, &sim).unwrap();
    println!("no effect: {null:?}");
    assert!(null.power < 0.1, "{null:?}");
    assert_eq!(null.normal_power, 0.05);
}

#[test]
fn bad_power_inputs_are_errors() {
    let m = PowerModel::default();
    assert!(matches!(
        required_tasks(&m, 0.0),
        Err(StatsError::InvalidInput(_))
    ));
    assert!(matches!(
        required_tasks(&m, -60.0),
        Err(StatsError::InvalidInput(_))
    ));
    assert!(matches!(
        required_tasks(&m, f64::NAN),
        Err(StatsError::InvalidInput(_))
    ));
    for bad in [
        PowerModel {
            base_rate: 1.5,
            ..m
        },
        PowerModel { icc: 1.0, ..m },
        PowerModel { alpha: 0.0, ..m },
        PowerModel { power: 1.0, ..m },
        PowerModel {
            samples_base: 0,
            ..m
        },
        PowerModel {
            effect_sd_pp: -1.0,
            ..m
        },
    ] {
        assert!(matches!(
            required_tasks(&bad, -10.0),
            Err(StatsError::InvalidConfig { .. })
        ));
    }
    assert!(matches!(
        normal_power(&m, -10.0, 1),
        Err(StatsError::TooFewUnits { .. })
    ));
    assert!(matches!(
        detectable_delta(&m, 0, EffectDirection::Harm),
        Err(StatsError::TooFewUnits { .. })
    ));
    // At a base rate of 2 % no harm with 3 tasks can reach 80 % power.
    let low = PowerModel {
        base_rate: 0.02,
        ..m
    };
    assert!(matches!(
        detectable_delta(&low, 3, EffectDirection::Harm),
        Err(StatsError::NotDetectable { .. })
    ));
    // No room for harm at all.
    let zero = PowerModel {
        base_rate: 0.0,
        ..m
    };
    assert!(matches!(
        detectable_delta(&zero, 100, EffectDirection::Harm),
        Err(StatsError::NotDetectable { .. })
    ));
    assert!(matches!(
        simulate_power(
            &m,
            -10.0,
            30,
            &SimulationConfig {
                simulations: 0,
                ..Default::default()
            }
        ),
        Err(StatsError::InvalidConfig { .. })
    ));
    assert!(matches!(
        simulate_power(&m, -10.0, 1, &SimulationConfig::default()),
        Err(StatsError::TooFewUnits { .. })
    ));
}
