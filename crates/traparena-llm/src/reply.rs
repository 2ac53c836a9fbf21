//! What the components say about a reply that has no answer to read.

use traparena_model::Reply;

/// Why a reply of `component` (attacker, curator) has no answer to read: the error text, never
/// a message or silence.
pub(crate) fn no_answer(component: &str, reply: &Reply, finish_reason: Option<&str>) -> String {
    let cut = finish_reason == Some("length");
    match (&reply.reasoning, reply.cut_off_in_reasoning || cut) {
        (Some(r), true) => format!(
            "the {component}'s reply stopped at the response length limit inside its reasoning ({} characters of reasoning, no answer); raise its max tokens",
            r.chars().count()
        ),
        (Some(r), false) => format!(
            "the {component}'s reply has reasoning ({} characters) but no answer outside it",
            r.chars().count()
        ),
        (None, true) => {
            format!("the {component}'s reply is empty: it stopped at the response length limit")
        }
        (None, false) => format!("the {component}'s reply is empty"),
    }
}
