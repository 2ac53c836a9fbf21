//! An external agent's steps as its requests show them: where a step's observation is, what
//! the agent reports after a response, and a response as the record states it.

use traparena_model::{ChatResponse, Message, MessageRole};

/// One response as the agent's later requests repeat it.
#[derive(Debug, Clone)]
pub(crate) struct Stated {
    /// The response's text.
    pub content: String,
    /// The id of its first tool call.
    pub first_call: Option<String>,
}

/// Where step `step`'s observation is in `messages`: in the run of non-assistant messages
/// after the step's response, the last tool result, else the last message — after the
/// `step`-th assistant message when it still reads as the response given, else after the
/// assistant message that does.
pub(crate) fn observation_slot(
    messages: &[Message],
    step: usize,
    stated: &Stated,
) -> Option<usize> {
    let assistants: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == MessageRole::Assistant)
        .map(|(i, _)| i)
        .collect();
    // The same response: the same first tool call, and (for a reply without tool calls, or
    // one whose calls carry no id) the same text.
    let same = |i: usize| {
        let m = &messages[i];
        m.tool_calls.first().map(|c| c.id.as_str()) == stated.first_call.as_deref()
            && (stated.first_call.is_some()
                || m.content.as_deref().unwrap_or("").trim() == stated.content.trim())
    };
    let at = assistants
        .get(step - 1)
        .copied()
        .filter(|&i| same(i))
        .or_else(|| assistants.iter().copied().find(|&i| same(i)))?;
    let run: Vec<&Message> = messages[at + 1..]
        .iter()
        .take_while(|m| m.role != MessageRole::Assistant)
        .collect();
    let last_tool = run.iter().rposition(|m| m.role == MessageRole::Tool);
    match (last_tool, run.len()) {
        (_, 0) => None,
        (Some(i), _) => Some(at + 1 + i),
        (None, n) => Some(at + n),
    }
}

/// The observation an agent reports in a request: the messages after its last assistant
/// message (all of them when there is none), joined by newlines.
pub(crate) fn observation_of(messages: &[Message]) -> String {
    let start = messages
        .iter()
        .rposition(|m| m.role == MessageRole::Assistant)
        .map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter_map(|m| m.content.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A response as text: the content, then each tool call as `name(arguments)`.
pub(crate) fn stated(response: &ChatResponse) -> (String, Stated, Option<String>) {
    let m = response.message().cloned().unwrap_or_default();
    let content = m.content.clone().unwrap_or_default();
    let mut raw = content.clone();
    for c in &m.tool_calls {
        if !raw.is_empty() {
            raw.push('\n');
        }
        raw.push_str(&format!("{}({})", c.function.name, c.function.arguments));
    }
    let first_call = m.tool_calls.first().map(|c| c.id.clone());
    (
        raw,
        Stated {
            content,
            first_call,
        },
        m.reasoning_content.clone(),
    )
}

/// Gives every tool call of `response` without an id one (`call_<step>_<i>`): the agent
/// repeats the ids in later requests, where they find the step again, and Messages and
/// Responses clients need them to pair a call with its result.
pub(crate) fn with_call_ids(mut response: ChatResponse, step: u32) -> ChatResponse {
    for choice in &mut response.choices {
        for (i, c) in choice.message.tool_calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{step}_{i}");
            }
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convo(observations: &[&str]) -> Vec<Message> {
        let mut m = vec![Message::system("s"), Message::user("task")];
        for (i, o) in observations.iter().enumerate() {
            m.push(Message::assistant(format!("r{}", i + 1)));
            m.push(Message::user(*o));
        }
        m
    }

    fn stated_text(t: &str) -> Stated {
        Stated {
            content: t.into(),
            first_call: None,
        }
    }

    #[test]
    fn a_step_is_found_by_position_and_else_by_its_response() {
        let m = convo(&["o1", "o2", "o3"]);
        assert_eq!(observation_slot(&m, 2, &stated_text("r2")), Some(5));
        // The agent dropped its first exchange: step 2 is now the first assistant message.
        let mut dropped = m.clone();
        dropped.drain(2..4);
        assert_eq!(observation_slot(&dropped, 2, &stated_text("r2")), Some(3));
        assert_eq!(observation_slot(&m, 2, &stated_text("gone")), None);
        // A response not yet followed by an observation has no slot.
        let mut open = convo(&["o1"]);
        open.push(Message::assistant("r2"));
        assert_eq!(observation_slot(&open, 2, &stated_text("r2")), None);
    }

    #[test]
    fn a_message_goes_into_the_last_tool_result_of_the_step() {
        let call = traparena_model::ToolCall::function("c1", "Bash", "{}");
        let stated = Stated {
            content: String::new(),
            first_call: Some("c1".into()),
        };
        let m = vec![
            Message::system("s"),
            Message::user("task"),
            Message::assistant_tool_calls(None, vec![call.clone()]),
            Message::tool("c1", "out a"),
            Message::tool("c2", "out b"),
            Message::user("<system-reminder>"),
        ];
        assert_eq!(observation_slot(&m, 1, &stated), Some(4));
        // Without tool results (an agent that speaks text), the last message of the run.
        let text = convo(&["o1"]);
        assert_eq!(observation_slot(&text, 1, &stated_text("r1")), Some(3));
    }

    #[test]
    fn tool_calls_without_ids_get_ids_that_name_the_step() {
        let r = ChatResponse::from_tool_calls(
            "m",
            vec![
                traparena_model::ToolCall::function("", "a", "{}"),
                traparena_model::ToolCall::function("kept", "b", "{}"),
            ],
        );
        let ids: Vec<String> = with_call_ids(r, 3)
            .tool_calls()
            .iter()
            .map(|c| c.id.clone())
            .collect();
        assert_eq!(ids, ["call_3_0", "kept"]);
    }

    #[test]
    fn the_observation_is_what_follows_the_last_response() {
        let mut m = convo(&["o1"]);
        assert_eq!(observation_of(&m), "o1");
        m.push(Message::assistant("r2"));
        m.push(Message::tool("c1", "out a"));
        m.push(Message::tool("c2", "out b"));
        assert_eq!(observation_of(&m), "out a\nout b");
        assert_eq!(observation_of(&convo(&[])), "s\ntask");
    }
}
