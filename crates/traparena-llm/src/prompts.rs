//! Versioned prompt templates of the LLM agent, the trajectory-conditioned attacker and the
//! curator.
//!
//! Each template is a file of `crates/traparena-llm/prompts/`, named
//! `<component>.<template>.v<N>.txt` and compiled in with `include_str!`: the text lives there
//! once (the file's text without its final line break). Templates are plain text with
//! `{{name}}` placeholders, filled by [`fill`] in a single pass (a value that itself contains
//! `{{...}}` is never expanded again, so a repair description cannot inject a placeholder).
//!
//! The [`prompt_hash`] of the exact templates (versioned names and texts) and generated parts a
//! configured agent, attacker or curator uses goes into every episode record
//! (`prompt_hashes`), so results produced with different prompts are never mixed up silently.
//! A template's version is part of its identity: a test checks every template's SHA-256
//! against the one recorded for its version, so changing a text without a new version fails.
//! To change a template, copy it to the next version (`agent.system.v2.txt`), edit the copy,
//! point the constant at it, remove the old file and record the new hash in the test. The
//! action descriptions generated from `Action` ([`crate::action_list`], [`crate::action_forms`],
//! the schema and the tools) are versioned the same way, as [`ACTIONS_VERSION`].

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// A prompt template: its versioned name (the file name without `.txt`) and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// `<component>.<template>.v<N>`, the name of its file in `prompts/`.
    pub name: &'static str,
    /// The text, with its `{{name}}` placeholders.
    pub text: &'static str,
}

/// The text of a template file: all of it but the final line break, which editors add.
const fn without_final_newline(text: &'static str) -> &'static str {
    match text.as_bytes() {
        [.., b'\n'] => text.split_at(text.len() - 1).0,
        _ => text,
    }
}

/// The template in `prompts/<name>.txt`.
macro_rules! template {
    ($name:literal) => {
        Template {
            name: $name,
            text: without_final_newline(include_str!(concat!("../prompts/", $name, ".txt"))),
        }
    };
}

/// The agent's system prompt. Placeholders: `budget`, `actions` (the generated
/// [`action_list`](crate::action_list)), `protocol`, `defence`.
pub const AGENT_SYSTEM: Template = template!("agent.system.v1");
/// Protocol block of the agent's system prompt for native tool calls.
pub const AGENT_PROTOCOL_TOOLS: Template = template!("agent.protocol-tools.v1");
/// Protocol block for JSON actions constrained by a response format. Placeholders: `forms`
/// (the generated [`action_forms`](crate::action_forms)).
pub const AGENT_PROTOCOL_JSON: Template = template!("agent.protocol-json.v1");
/// Protocol block for the plain-text fallback. Placeholders: `forms`.
pub const AGENT_PROTOCOL_TEXT: Template = template!("agent.protocol-text.v1");
/// The optional defence instruction appended to the agent's system prompt.
pub const AGENT_DEFENCE: Template = template!("agent.defence.v1");
/// The agent's first user message. Placeholders: `description`.
pub const AGENT_TASK: Template = template!("agent.task.v1");
/// Header of every observation. Placeholders: `kind` (`Tool output` or `Tool error`), `step`,
/// `budget`, `left`.
pub const AGENT_OBSERVATION: Template = template!("agent.observation.v1");
/// The label before a collaborator message, rendered after the tool output.
pub const AGENT_COLLABORATOR: Template = template!("agent.collaborator.v1");
/// What the agent is told after a reply that held no readable action. Placeholders:
/// `reason`.
pub const AGENT_UNREADABLE: Template = template!("agent.unreadable.v1");
/// The one corrective instruction after an unreadable reply, tools protocol.
pub const AGENT_CORRECT_TOOLS: Template = template!("agent.correct-tools.v1");
/// The one corrective instruction after an unreadable reply, JSON and text protocols.
pub const AGENT_CORRECT_JSON: Template = template!("agent.correct-json.v1");

/// The attacker's system prompt. Placeholders: `knowledge`, `max_chars`.
pub const ATTACKER_SYSTEM: Template = template!("attacker.system.v1");
/// The blind attacker's knowledge rule.
pub const ATTACKER_BLIND: Template = template!("attacker.blind.v1");
/// The reference attacker's knowledge rule.
pub const ATTACKER_REFERENCE: Template = template!("attacker.reference.v1");
/// The attacker's request. Placeholders: `description`, `symbols`, `decoys`, `reference`,
/// `notes`, `step`, `budget`, `history`, `retry`.
pub const ATTACKER_REQUEST: Template = template!("attacker.request.v1");
/// The reference block of the attacker's request (reference variant only). Placeholders:
/// `locations`, `patch`.
pub const ATTACKER_REFERENCE_BLOCK: Template = template!("attacker.reference-block.v1");
/// The re-prompt after leakage-filter rejections. Placeholders: `rejections`.
pub const ATTACKER_RETRY: Template = template!("attacker.retry.v1");

/// The curator's system prompt. Placeholders: `max_notes`, `max_chars`.
pub const CURATOR_SYSTEM: Template = template!("curator.system.v1");
/// The curator's request. Placeholders: `target`, `round`, `notes`, `count`, `evidence`.
pub const CURATOR_REQUEST: Template = template!("curator.request.v1");

/// Every template, in the order of the constants above.
pub const TEMPLATES: [Template; 19] = [
    AGENT_SYSTEM,
    AGENT_PROTOCOL_TOOLS,
    AGENT_PROTOCOL_JSON,
    AGENT_PROTOCOL_TEXT,
    AGENT_DEFENCE,
    AGENT_TASK,
    AGENT_OBSERVATION,
    AGENT_COLLABORATOR,
    AGENT_UNREADABLE,
    AGENT_CORRECT_TOOLS,
    AGENT_CORRECT_JSON,
    ATTACKER_SYSTEM,
    ATTACKER_BLIND,
    ATTACKER_REFERENCE,
    ATTACKER_REQUEST,
    ATTACKER_REFERENCE_BLOCK,
    ATTACKER_RETRY,
    CURATOR_SYSTEM,
    CURATOR_REQUEST,
];

/// The version of the action descriptions generated from `Action`'s schema (its doc comments):
/// the agent's action list and forms, its response schema and its tools. Bump it when they
/// change; a test checks their hash against the one recorded for this version.
pub const ACTIONS_VERSION: &str = "actions.v1";

/// Fills `{{name}}` placeholders of `template` from `values` in one pass. Unknown placeholders
/// are left as they are; values are inserted verbatim and never expanded again.
///
/// ```
/// use traparena::llm::prompts::fill;
/// assert_eq!(fill("a {{x}} b {{y}}", &[("x", "{{y}}"), ("y", "2")]), "a {{y}} b 2");
/// ```
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = &after[..end];
                match values.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push_str("{{");
                        out.push_str(name);
                        out.push_str("}}");
                    }
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The hash recorded for a configured component's prompts: hex SHA-256 of each template's
/// versioned name and text, then of each generated part (JSON schemas, tool definitions,
/// versioned by the caller), each followed by a record separator line.
///
/// ```
/// use traparena::llm::prompts::{AGENT_DEFENCE, AGENT_SYSTEM, prompt_hash};
/// let a = prompt_hash(&[AGENT_SYSTEM], &["schema"]);
/// assert_eq!(a.len(), 64);
/// assert_ne!(a, prompt_hash(&[AGENT_SYSTEM, AGENT_DEFENCE], &["schema"]));
/// assert_ne!(a, prompt_hash(&[AGENT_SYSTEM], &["schema!"]));
/// ```
pub fn prompt_hash(templates: &[Template], generated: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for t in templates {
        hasher.update(t.name.as_bytes());
        hasher.update(b"\n");
        hasher.update(t.text.as_bytes());
        hasher.update(b"\n\x1e\n");
    }
    for g in generated {
        hasher.update(g.as_bytes());
        hasher.update(b"\n\x1e\n");
    }
    hex(&hasher.finalize())
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// `text` cut to at most `max` characters (on a character boundary); a cut text ends with a
/// note saying how much was left out.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[... {} more characters not shown]", count - max)
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let kept: String = flat.chars().take(max).collect();
        format!("{kept}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SHA-256 of every template version there is or was. A version's text never changes:
    /// a new text is a new version.
    const RECORDED: [(&str, &str); 19] = [
        (
            "agent.collaborator.v1",
            "2535b748e4d94fe92fd3d21a387ab45da0ab4b3c17104e65554ab017b0e44dcd",
        ),
        (
            "agent.correct-json.v1",
            "4526d69bef54cc9413ebb50c4b7bd4232a5ff81ac6e7d835731558ab735dfb42",
        ),
        (
            "agent.correct-tools.v1",
            "0fe0dbe8305ffd6893c69dac2d4ce16042571b208d3c014e21e7757893072077",
        ),
        (
            "agent.defence.v1",
            "63aa0c3fd30f3c01c5acb7270c4ee57d324b57ae92ed827df9fb928870cad513",
        ),
        (
            "agent.observation.v1",
            "c1f0579f6cc987cee5cff131e90353d15c633c73bcfe09ad1bdbc218f0f6b4e4",
        ),
        (
            "agent.protocol-json.v1",
            "d58d5ff95c92a9514fd2be2906c63a3c3201b401ff4a1c7e94fb0b2a1c101c6f",
        ),
        (
            "agent.protocol-text.v1",
            "da370b60ec9eb315dbcbbb7b86aa41b262fd37e983bd00373c281d9dbc5eafbb",
        ),
        (
            "agent.protocol-tools.v1",
            "a08cb4686684026e5844e33a73bca8dd8d75e3b47da06c9a270bfd0334bc3db2",
        ),
        (
            "agent.system.v1",
            "34afc9593c4e9436e7ca9a52762b6156855fa2c15a1aec3ad93e10245a9fa61f",
        ),
        (
            "agent.task.v1",
            "033a3f06893e392f6aa13baec052188cf995838f8ffab2389cfd35f0125a0cf3",
        ),
        (
            "agent.unreadable.v1",
            "6d53353a8a2abbf956823727fddb88c5fe224b03c1faae7b26df5beb608bdd30",
        ),
        (
            "attacker.blind.v1",
            "2fb289b6c3804b860c6e44c6a8a687217229d198427fb84e5116c7b694ac0b43",
        ),
        (
            "attacker.reference-block.v1",
            "44590590102c15a090a2ce4347341653a13d3f7a1a9731b91109b2a798465919",
        ),
        (
            "attacker.reference.v1",
            "25d7c344f76e9cfff1e3639244446277d2b9fd4170aa6fde74732be61d34cce7",
        ),
        (
            "attacker.request.v1",
            "663a8bab69cf6ee35f35e69ff4d7c6b024e445cf352c8deea1e420dca31662b2",
        ),
        (
            "attacker.retry.v1",
            "dce0816b25b9a3c6b3d1cd5cf307ea51de9238d5abe2b682c07347d01e7f15f7",
        ),
        (
            "attacker.system.v1",
            "b67b76946907f7d97c2ead3e2457408dde8fbca1c62eda29f1c3aeb7daa314ef",
        ),
        (
            "curator.request.v1",
            "c8566f6eb22d402946f2cf81bd05468d69ecdce238d088d00915cb001c43d235",
        ),
        (
            "curator.system.v1",
            "6dca991add9c25f60600a0f425ef7863a9371defeb34ebb33940eaf4db05ddb3",
        ),
    ];

    /// The SHA-256 of the generated action descriptions, per [`ACTIONS_VERSION`].
    const RECORDED_ACTIONS: [(&str, &str); 1] = [(
        "actions.v1",
        "8bb7a31f3d68eb87150c22ca03ee663eed5c5ca3f4875ddeb1ea63ee9d3591d5",
    )];

    fn sha256(text: &str) -> String {
        hex(&Sha256::digest(text.as_bytes()))
    }

    #[test]
    fn every_template_version_has_its_recorded_text() {
        for t in TEMPLATES {
            let Some((_, recorded)) = RECORDED.iter().find(|(n, _)| *n == t.name) else {
                panic!(
                    "prompts/{}.txt is a new template version: record its SHA-256 {} in RECORDED",
                    t.name,
                    sha256(t.text)
                );
            };
            assert_eq!(
                sha256(t.text),
                *recorded,
                "prompts/{}.txt changed, but its version did not: the text of a version never \
                 changes. Bump the version (copy the file to the next vN, point the constant at \
                 it, remove the old file) and record the new file's SHA-256 in RECORDED",
                t.name
            );
        }
    }

    #[test]
    fn every_template_file_is_a_template_and_the_names_say_the_version() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/prompts");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut names: Vec<String> = TEMPLATES
            .iter()
            .map(|t| format!("{}.txt", t.name))
            .collect();
        names.sort();
        assert_eq!(
            files, names,
            "every file of prompts/ is one of TEMPLATES, and no other"
        );
        for t in TEMPLATES {
            let version = t.name.rsplit('.').next().unwrap();
            assert!(
                version.starts_with('v') && version[1..].parse::<u32>().is_ok(),
                "{}: the name ends in .v<N>",
                t.name
            );
        }
    }

    #[test]
    fn the_generated_action_descriptions_have_their_recorded_text() {
        let generated = [
            crate::action_list(),
            crate::action_forms(),
            crate::action_schema().to_string(),
            serde_json::to_string(&crate::action_tools()).unwrap(),
        ]
        .join("\n\x1e\n");
        let recorded = RECORDED_ACTIONS
            .iter()
            .find(|(v, _)| *v == ACTIONS_VERSION)
            .map(|(_, h)| *h);
        assert_eq!(
            Some(sha256(&generated).as_str()),
            recorded,
            "what the agent is told about the actions (generated from Action's schema and doc \
             comments) changed, but ACTIONS_VERSION ({ACTIONS_VERSION}) did not: bump it and \
             record the new SHA-256 in RECORDED_ACTIONS"
        );
    }

    #[test]
    fn fill_is_single_pass_and_keeps_unknown_placeholders() {
        assert_eq!(fill("{{a}}{{b}}", &[("a", "1"), ("b", "2")]), "12");
        assert_eq!(fill("{{a}} {{zz}}", &[("a", "{{zz}}")]), "{{zz}} {{zz}}");
        assert_eq!(fill("open {{ end", &[]), "open {{ end");
        assert_eq!(fill("no placeholders", &[("a", "x")]), "no placeholders");
    }

    #[test]
    fn clip_counts_characters() {
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo", 2), "hé\n[... 3 more characters not shown]");
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc...");
    }
}
