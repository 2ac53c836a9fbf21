//! The cost fields of a results line: written only when known, read back exactly, and lines
//! without them (the bundled toy results) read and written byte for byte as before.

use traparena_results::{ResultLine, read_lines};
use traparena_task::{Cost, Usage};

fn toy_lines() -> (String, Vec<ResultLine>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/results/synthetic/episodes.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    (text, read_lines::<ResultLine>(&path).unwrap().lines)
}

#[test]
fn lines_without_a_cost_are_written_as_they_were() {
    let (text, lines) = toy_lines();
    assert!(!text.contains("\"cost\""), "the toy results know no prices");
    let again: String = lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect();
    assert_eq!(again, text);
}

#[test]
fn a_cost_per_role_is_written_in_dollars_and_read_back_exactly() {
    let (_, lines) = toy_lines();
    let mut l = lines[0].clone();
    l.usage = Usage {
        prompt_tokens: 1200,
        completion_tokens: 300,
        calls: 3,
        cached_tokens: 200,
        cost: Some(Cost {
            nano_usd: 4_600_000,
            computed_calls: 3,
            ..Cost::default()
        }),
        ..Usage::default()
    };
    l.attacker_usage = Usage {
        prompt_tokens: 500,
        completion_tokens: 40,
        calls: 1,
        cost: Some(Cost {
            nano_usd: 123_456_789,
            reported_calls: 1,
            ..Cost::default()
        }),
        ..Usage::default()
    };
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(
        json["usage"]["cost"],
        serde_json::json!({"usd": 0.0046, "computed_calls": 3})
    );
    assert_eq!(
        json["attacker_usage"]["cost"],
        serde_json::json!({"usd": 0.123456789, "reported_calls": 1})
    );
    let back: ResultLine = serde_json::from_value(json).unwrap();
    assert_eq!(back, l);
    assert_eq!(back.usage.cost.unwrap().source(), "prices");
    assert_eq!(back.attacker_usage.cost.unwrap().source(), "provider");
    // A negative amount is no cost.
    let bad = serde_json::to_string(&l)
        .unwrap()
        .replace("\"usd\":0.0046", "\"usd\":-1");
    assert!(serde_json::from_str::<ResultLine>(&bad).is_err());
}

#[test]
fn sums_of_costs_keep_unknown_calls_and_do_not_depend_on_order() {
    let known = |n| Usage {
        cost: Some(Cost {
            nano_usd: n,
            computed_calls: 1,
            ..Cost::default()
        }),
        ..Usage::default()
    };
    let unknown = Usage {
        cost: Some(Cost {
            unknown_calls: 1,
            ..Cost::default()
        }),
        calls_without_usage: 1,
        ..Usage::default()
    };
    let parts = [known(100_000_001), Usage::default(), unknown, known(7)];
    let mut a = Usage::default();
    for u in parts {
        a += u;
    }
    let mut b = Usage::default();
    for u in parts.iter().rev() {
        b += *u;
    }
    assert_eq!(a, b);
    let c = a.cost.unwrap();
    assert_eq!(
        (c.nano_usd, c.computed_calls, c.unknown_calls),
        (100_000_008, 2, 1)
    );
    assert_eq!(a.since(&known(7)).cost.unwrap().nano_usd, 100_000_001);
}
