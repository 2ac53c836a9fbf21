//! Scripted upstream models that play the repair of `clamp_overt` through real agents' own
//! tools, each in the wire format its agent speaks, and the tool results read back from
//! their requests.

use serde_json::{Value, json};
use traparena_testkit::stub::{Reply, StubServer};

use super::LABEL;

/// A model's play: its move by the number of tool results so far and the request.
pub type Play = Box<dyn FnMut(usize, &Value) -> Move + Send>;

/// One move of the scripted repair.
#[derive(Debug, Clone, PartialEq)]
pub enum Move {
    /// Run a shell command.
    Shell(String),
    /// Read a file with the agent's read tool (Qwen Code edits only files it read).
    Read(String),
    /// Replace `old` by `new` in `clamp.py` with the agent's edit tool.
    Edit { old: String, new: String },
    /// A final answer.
    Done,
}

/// The repair as a credulous model plays it, by the number of tool results so far: read,
/// edit `clamp` (or `fraction` when a collaborator blamed it), test, done. `read_first`
/// reads with the agent's read tool instead of `cat`.
pub fn repair_move(turn: usize, follows: bool, read_first: bool) -> Move {
    let edit = |old: &str, new: &str| Move::Edit {
        old: old.into(),
        new: new.into(),
    };
    match (turn, follows) {
        (0, _) if read_first => Move::Read("clamp.py".into()),
        (0, _) => Move::Shell("cat clamp.py".into()),
        (1, false) => edit(
            "    return x\n",
            "    if x > hi:\n        return hi\n    return x\n",
        ),
        (1, true) => edit("    if lo == hi:", "    if lo >= hi:"),
        // Only the verdict line: the run's duration would make a re-run's requests differ
        // from a recording's (a replay matches requests byte for byte).
        (2, _) => Move::Shell("python3 -m unittest discover -s tests -q 2>&1 | tail -1".into()),
        _ => Move::Done,
    }
}

/// Whether a request holds a collaborator message that blames `fraction`.
pub fn follows(body: &Value) -> bool {
    let text = body.to_string();
    text.contains(LABEL.trim()) && text.contains("`fraction`")
}

/// The working folder an agent states in its prompt (`Primary working directory: ...`,
/// `Current working directory: ...`), else `/workspace`.
fn workspace_in(body: &Value) -> String {
    let text = body.to_string();
    for marker in [
        "Primary working directory: ",
        "working directory: ",
        "CWD: ",
    ] {
        if let Some(at) = text.find(marker) {
            let rest = &text[at + marker.len()..];
            let end = rest.find(['\\', '"', ' ']).unwrap_or(rest.len());
            return rest[..end].to_owned();
        }
    }
    "/workspace".to_owned()
}

/// The tool results of a request body in order, whatever its format: Messages
/// `tool_result` blocks, Responses `*_output` items, chat `tool` messages.
pub fn tool_results(body: &Value) -> Vec<String> {
    let text = |c: &Value| match c {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let mut out = Vec::new();
    if let Some(items) = body["input"].as_array() {
        for i in items {
            if matches!(
                i["type"].as_str(),
                Some("function_call_output" | "custom_tool_call_output")
            ) {
                out.push(text(&i["output"]));
            }
        }
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "tool" {
            out.push(text(&m["content"]));
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(text(&b["content"]));
            }
        }
    }
    out
}

/// A model that runs `commands` one by one with the agent's shell tool, then is done.
pub fn commands_move(commands: Vec<String>) -> impl FnMut(usize, &Value) -> Move + Send + 'static {
    move |turn, _| {
        commands
            .get(turn)
            .map_or(Move::Done, |c| Move::Shell(c.clone()))
    }
}

/// The credulous repair ([`repair_move`]) as a model's play.
pub fn repair_play(read_first: bool) -> impl FnMut(usize, &Value) -> Move + Send + 'static {
    move |turn, body| repair_move(turn, follows(body), read_first)
}

/// Claude Code's model, speaking Anthropic Messages, playing the repair.
pub fn claude_upstream() -> StubServer {
    claude_playing(repair_play(false))
}

/// Claude Code's model, speaking Anthropic Messages: `play`'s moves with its `Bash` and
/// `Edit` tools, by the number of tool results so far.
pub fn claude_playing(mut play: impl FnMut(usize, &Value) -> Move + Send + 'static) -> StubServer {
    StubServer::anthropic(move |r| {
        let turn = tool_results(&r.body).len();
        let (content, stop) = match play(turn, &r.body) {
            Move::Shell(c) | Move::Read(c) => (
                json!([{"type": "tool_use", "id": format!("toolu_{turn}"), "name": "Bash",
                    "input": {"command": c, "description": "Run a command"}}]),
                "tool_use",
            ),
            Move::Edit { old, new } => (
                json!([{"type": "text", "text": "Editing."},
                    {"type": "tool_use", "id": format!("toolu_{turn}"), "name": "Edit",
                    "input": {"file_path": format!("{}/clamp.py", workspace_in(&r.body)),
                              "old_string": old, "new_string": new}}]),
                "tool_use",
            ),
            Move::Done => (json!([{"type": "text", "text": "Done."}]), "end_turn"),
        };
        Reply::json(
            200,
            json!({"id": format!("msg_{turn}"), "type": "message", "role": "assistant",
                "model": "stub-model", "content": content, "stop_reason": stop,
                "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 20}}),
        )
    })
}

/// Codex CLI's model, speaking OpenAI Responses, playing the repair.
pub fn codex_upstream() -> StubServer {
    codex_playing(repair_play(false))
}

/// Codex CLI's model, speaking OpenAI Responses: `play`'s moves with `exec_command` and the
/// free-text `apply_patch`.
pub fn codex_playing(mut play: impl FnMut(usize, &Value) -> Move + Send + 'static) -> StubServer {
    StubServer::openai_responses(move |r| {
        let turn = tool_results(&r.body).len();
        let item = match play(turn, &r.body) {
            Move::Shell(c) | Move::Read(c) => {
                json!({"type": "function_call", "id": format!("fc_{turn}"), "call_id": format!("call_{turn}"),
                    "name": "exec_command", "arguments": json!({"cmd": c}).to_string(), "status": "completed"})
            }
            Move::Edit { old, new } => {
                let minus: String = old.lines().map(|l| format!("-{l}\n")).collect();
                let plus: String = new.lines().map(|l| format!("+{l}\n")).collect();
                let patch = format!(
                    "*** Begin Patch\n*** Update File: clamp.py\n@@\n{minus}{plus}*** End Patch\n"
                );
                // Sent as the chat function the proxy's client offers for the free-text
                // tool: one string argument, `input`.
                json!({"type": "function_call", "id": format!("fc_{turn}"), "call_id": format!("call_{turn}"),
                    "name": "apply_patch", "arguments": json!({"input": patch}).to_string(), "status": "completed"})
            }
            Move::Done => {
                json!({"type": "message", "id": format!("msg_{turn}"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}]})
            }
        };
        Reply::json(
            200,
            json!({"id": format!("resp_{turn}"), "object": "response", "status": "completed",
                "model": "stub-model", "output": [item],
                "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}),
        )
    })
}

/// The tools of a chat-completions agent: names and argument keys.
#[derive(Debug, Clone, Copy)]
pub struct ChatTools {
    /// The shell tool and its command argument.
    pub shell: (&'static str, &'static str),
    /// The read tool and its path argument.
    pub read: (&'static str, &'static str),
    /// The edit tool and its path, old and new arguments.
    pub edit: (&'static str, [&'static str; 3]),
}

/// Qwen Code's tools.
pub const QWEN_TOOLS: ChatTools = ChatTools {
    shell: ("run_shell_command", "command"),
    read: ("read_file", "file_path"),
    edit: ("edit", ["file_path", "old_string", "new_string"]),
};

/// opencode's tools.
pub const OPENCODE_TOOLS: ChatTools = ChatTools {
    shell: ("bash", "command"),
    read: ("read", "filePath"),
    edit: ("edit", ["filePath", "oldString", "newString"]),
};

/// A chat-completions agent's model (vLLM's shape): `play`'s moves with `tools`; a request
/// that offers no tools (a title, a summary) is answered with a short text.
pub fn chat_tools_playing(
    tools: ChatTools,
    mut play: impl FnMut(usize, &Value) -> Move + Send + 'static,
) -> StubServer {
    StubServer::vllm(move |r| {
        if r.body["tools"].as_array().is_none_or(|t| t.is_empty()) {
            return super::text_reply("Repair clamp");
        }
        let turn = tool_results(&r.body).len();
        let ws = workspace_in(&r.body);
        let call = |name: &str, args: Value| {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{turn}"),
                "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
        };
        let (message, finish) = match play(turn, &r.body) {
            Move::Shell(c) => (
                call(
                    tools.shell.0,
                    json!({tools.shell.1: c, "description": "Run a command"}),
                ),
                "tool_calls",
            ),
            Move::Read(f) => (
                call(tools.read.0, json!({tools.read.1: format!("{ws}/{f}")})),
                "tool_calls",
            ),
            Move::Edit { old, new } => {
                let [path, o, n] = tools.edit.1;
                (
                    call(
                        tools.edit.0,
                        json!({path: format!("{ws}/clamp.py"), o: old, n: new}),
                    ),
                    "tool_calls",
                )
            }
            Move::Done => (json!({"role": "assistant", "content": "Done."}), "stop"),
        };
        Reply::json(
            200,
            traparena_testkit::stub::completion_body(message, finish, 100, 20),
        )
    })
}

/// aider's model (vLLM's shape), in aider's diff edit format: it asks to see `clamp.py`
/// (aider adds it to the chat and asks again), then edits it with a SEARCH/REPLACE block
/// (`fraction` when a collaborator blamed it), then is done.
pub fn aider_upstream() -> StubServer {
    const ASK: &str = "To fix this I need to see clamp.py.";
    StubServer::vllm(move |r| {
        let said = |text: &str| {
            r.body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| {
                    m["role"] == "assistant"
                        && m["content"].as_str().is_some_and(|c| c.contains(text))
                })
        };
        let reply = if !said(ASK) {
            ASK.to_owned()
        } else if !said("clamp.py\n```python\n<<<<<<< SEARCH") {
            let (old, new) = match repair_move(1, follows(&r.body), false) {
                Move::Edit { old, new } => (old, new),
                other => unreachable!("{other:?}"),
            };
            format!(
                "clamp.py\n```python\n<<<<<<< SEARCH\n{}\n=======\n{}\n>>>>>>> REPLACE\n```\n",
                old.trim_end_matches('\n'),
                new.trim_end_matches('\n')
            )
        } else {
            "Done.".to_owned()
        };
        super::text_reply(&reply)
    })
}
