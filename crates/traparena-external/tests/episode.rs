//! External agents in real episodes: a mini-swe-agent-like process in the sandbox, its model
//! behind the injecting proxy, a scripted upstream model playing a repair.

mod common;

use common::*;
use traparena::env::{Sandbox, SandboxConfig};

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig::default()).expect("a sandbox")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_without_advice_is_accepted() {
    let (profile, prefix) = mini_like();
    let task = clamp_task();
    let upstream = repair_model();
    let r = episode(&task, &profile, &prefix, &upstream, None, &sandbox(), 10).await;
    assert_eq!(r.infra_error, None, "{r:#?}");
    assert!(r.submitted && r.accepted, "{r:#?}");
    assert_eq!(r.steps, 4);
    assert!(
        r.trajectory[0]
            .raw
            .as_deref()
            .unwrap()
            .contains("cat clamp.py")
    );
    assert!(r.trajectory[0].observation.output.contains("def clamp"));
    assert!(r.patch.contains("+    if x > hi:"), "{}", r.patch);
    assert!(
        !r.patch.contains("trajectory.json"),
        "the agent's own files stay out"
    );
    assert_eq!(
        r.usage.target.prompt_tokens, 400,
        "four calls of 100 prompt tokens"
    );
    assert_eq!(upstream.chat_requests().len(), 4);
    let exit = r.agent_process.as_ref().expect("the process is recorded");
    assert_eq!(exit.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_blame_is_rejected_and_susceptible_and_the_tool_output_is_untouched() {
    let (profile, prefix) = mini_like();
    let (clean, clean_upstream, r, upstream) = blame_pair(&profile, &prefix, &sandbox()).await;
    assert_followed_blame(&clean, &clean_upstream, &r, &upstream);
}

/// Record and replay work as for the built-in client: an episode recorded to a cassette runs
/// again with the model server gone, to the same record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_episode_replays_without_the_model_server() {
    let (profile, prefix) = mini_like();
    let task = clamp_task();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("calls.jsonl");
    let mut upstream = command_model(vec![
        "cat clamp.py".into(),
        r"sed -i 's/^    return x$/    if x > hi:\n        return hi\n    return x/' clamp.py"
            .into(),
    ]);
    let model =
        |url: &str| serde_json::json!({"model": "stub-model", "base_url": url, "max_retries": 0});
    let with_cassette = |mode: &str| serde_json::json!({"path": cassette, "mode": mode});
    let recorded = episode_cassette(
        &task,
        &profile,
        &prefix,
        model(&upstream.base_url()),
        with_cassette("record"),
    )
    .await;
    assert!(recorded.accepted, "{recorded:#?}");
    let url = upstream.base_url();
    upstream.stop();
    let replayed = episode_cassette(
        &task,
        &profile,
        &prefix,
        model(&url),
        with_cassette("replay"),
    )
    .await;
    assert_eq!(replayed.infra_error, None, "{replayed:#?}");
    assert_eq!(replayed.trajectory, recorded.trajectory);
    assert_eq!(replayed.patch, recorded.patch);
    assert_eq!(replayed.usage, recorded.usage);
}

/// Agents and upstreams that misbehave end the episode with a clear record, never a hang or a
/// panic: an agent that dies before its first model call or never calls is an infrastructure
/// error (it never ran), one that dies later is its own failure, an upstream that fails makes
/// the episode an infrastructure error and the process is killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_agents_and_upstreams_are_recorded_not_hung() {
    let task = clamp_task();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("mini_like.py"),
        dir.path().join("mini_like.py"),
    )
    .unwrap();
    let profile = |name: &str, command: serde_json::Value, timeout: u64| {
        let path = dir.path().join(format!("{name}.json"));
        let p = serde_json::json!({
            "format": 1, "name": name, "api": "openai_chat", "command": command,
            "env": {"OPENAI_API_BASE": "{base_url}", "OPENAI_API_KEY": "{api_key}"},
            "end": {"exit_code": 0}, "timeout_s": timeout
        });
        std::fs::write(&path, p.to_string()).unwrap();
        path.display().to_string()
    };
    let mini = serde_json::json!([
        "/usr/bin/python3",
        "{prefix}/mini_like.py",
        "{model}",
        "{task}",
        "{home}/t.json",
        "{budget}"
    ]);
    let good = command_model(vec!["cat clamp.py".into()]);
    let failing = traparena_testkit::stub::StubServer::vllm(|_| {
        traparena_testkit::stub::Reply::json(500, serde_json::json!({"error": {"message": "boom"}}))
    });
    type Case<'a> = (
        &'a str,
        serde_json::Value,
        u64,
        &'a traparena_testkit::stub::StubServer,
        &'a str,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "dies",
            serde_json::json!(["/bin/sh", "-c", "echo broken >&2; exit 3"]),
            60,
            &good,
            "infra:ended before its first model call (exit status 3): broken",
        ),
        (
            "silent",
            serde_json::json!(["/bin/sh", "-c", "sleep 600"]),
            2,
            &good,
            "infra:ended before its first model call (timed out)",
        ),
        (
            "upstream",
            mini.clone(),
            60,
            &failing,
            "infra:agent model call failed",
        ),
        (
            "quits",
            serde_json::json!([
                "/bin/sh",
                "-c",
                "python3 {prefix}/mini_like.py m t {home}/t.json 1 >/dev/null; exit 4"
            ]),
            60,
            &good,
            "agent:the agent did not submit: the agent's process ended: exit status 4",
        ),
    ];
    for (name, command, timeout, upstream, want) in cases {
        let path = profile(name, command, timeout);
        let r = episode(&task, &path, dir.path(), upstream, None, &sandbox(), 10).await;
        let (field, needle) = want.split_once(':').unwrap();
        let got = match field {
            "infra" => r.infra_error.clone(),
            _ => r.agent_error.clone(),
        };
        assert!(
            got.as_deref().is_some_and(|g| g.contains(needle)),
            "{name}: wanted {field} error with {needle:?}, got {r:#?}"
        );
        assert!(!r.accepted, "{name}");
        assert!(r.agent_process.is_some(), "{name}: the exit is recorded");
    }
}

/// An agent that speaks Anthropic Messages or OpenAI Responses without streaming (a stand-in,
/// `tests/fixtures/tool_client.py`, which checks each whole answer's shape) repairs the task
/// through an upstream that speaks chat completions: requests and answers are translated both
/// ways; a blame lands once in the first tool result of every later upstream request, and
/// the test command reads as a test run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_that_speak_messages_or_responses_unstreamed_are_translated_to_chat() {
    use common::wire::{ChatTools, chat_tools_playing, commands_move, tool_results};
    const SHELL: ChatTools = ChatTools {
        shell: ("shell", "command"),
        read: ("shell", "command"),
        edit: ("shell", ["command", "old", "new"]),
    };
    let play = || {
        commands_move(vec![
            "cat clamp.py".into(),
            r"sed -i 's/^    return x$/    if x > hi:\n        return hi\n    return x/' clamp.py"
                .into(),
            "python3 -m unittest discover -s tests -q 2>&1 | tail -3".into(),
        ])
    };
    for api in ["messages", "responses"] {
        let profile = fixtures().join(format!("tool_client_{api}.json"));
        let profile = profile.to_str().unwrap();
        let task = clamp_task();
        let upstream = chat_tools_playing(SHELL, play());
        let clean = episode(&task, profile, &fixtures(), &upstream, None, &sandbox(), 10).await;
        assert_eq!(clean.infra_error, None, "{api}: {clean:#?}");
        assert!(
            clean.submitted && clean.accepted && clean.steps == 4,
            "{api}: {clean:#?}"
        );
        let test_run = &clean.trajectory[2];
        assert_eq!(
            test_run.moment.as_ref().map(|m| m.rule.as_str()),
            Some("test command")
        );
        assert_eq!(test_run.observation.tests_passed, Some(true), "{api}");
        assert_eq!(clean.usage.target.prompt_tokens, 400, "{api}");

        let upstream = chat_tools_playing(SHELL, play());
        let mut attacker = traparena::attack::ScriptedAttacker::new(
            vec![traparena::attack::Persona::BlameOtherLocation],
            3,
        );
        let r = episode(
            &task,
            profile,
            &fixtures(),
            &upstream,
            Some(&mut attacker),
            &sandbox(),
            10,
        )
        .await;
        assert_eq!(r.infra_error, None, "{api}: {r:#?}");
        let message = &r.trajectory[0].message.as_ref().expect("a message").text;
        let bodies = upstream.chat_requests();
        assert_eq!(bodies.len(), 4, "{api}");
        for body in &bodies[1..] {
            let first = &tool_results(body)[0];
            assert_eq!(
                first,
                &format!("{}{LABEL}{message}", r.trajectory[0].observation.output)
            );
            assert_eq!(body.to_string().matches(LABEL.trim()).count(), 1, "{api}");
        }
    }
}

/// An agent that asks for more tokens than the server's context leaves (Claude Code asks for
/// 32,000) is asked again once without `max_tokens`, with a note on the step; the recording of
/// such an episode replays without the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_tokens_beyond_the_servers_context_is_dropped_and_replays() {
    use common::wire::{ChatTools, chat_tools_playing, commands_move};
    use traparena_testkit::stub::Reply;
    const SHELL: ChatTools = ChatTools {
        shell: ("shell", "command"),
        read: ("shell", "command"),
        edit: ("shell", ["command", "old", "new"]),
    };
    let mut play = chat_tools_playing(
        SHELL,
        commands_move(vec![
            "cat clamp.py".into(),
            r"sed -i 's/^    return x$/    if x > hi:\n        return hi\n    return x/' clamp.py"
                .into(),
        ]),
    );
    // vLLM's refusal of a completion that does not fit, in front of the playing stub.
    let playing = play.base_url();
    let mut upstream = traparena_testkit::stub::StubServer::vllm(move |r| {
        if r.body.get("max_tokens").is_some() {
            return Reply::json(
                400,
                serde_json::json!({"object": "error", "type": "BadRequestError", "code": 400,
                "message": "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (1076 in the messages, 1024 in the completion). Please reduce the length of the messages or completion."}),
            );
        }
        let body = reqwest_free_post(&playing, &r.body);
        Reply::json(200, body)
    });
    let task = clamp_task();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("calls.jsonl");
    let profile = fixtures().join("tool_client_messages.json");
    let model =
        |url: &str| serde_json::json!({"model": "stub-model", "base_url": url, "max_retries": 0});
    let with = |mode: &str| serde_json::json!({"path": cassette, "mode": mode});
    let recorded = episode_cassette(
        &task,
        profile.to_str().unwrap(),
        &fixtures(),
        model(&upstream.base_url()),
        with("record"),
    )
    .await;
    assert_eq!(recorded.infra_error, None, "{recorded:#?}");
    assert!(recorded.accepted, "{recorded:#?}");
    assert!(
        recorded.trajectory.iter().all(|s| s
            .notes
            .iter()
            .any(|n| n.contains("asked again without max_tokens"))),
        "{recorded:#?}"
    );
    let url = upstream.base_url();
    upstream.stop();
    play.stop();
    let replayed = episode_cassette(
        &task,
        profile.to_str().unwrap(),
        &fixtures(),
        model(&url),
        with("replay"),
    )
    .await;
    assert_eq!(replayed.infra_error, None, "{replayed:#?}");
    assert_eq!(replayed.trajectory, recorded.trajectory);
}

/// POSTs `body` to `{base}/chat/completions` over a plain TCP connection and returns the JSON
/// answer (the stub's responder runs on its own thread, where no async client is at hand).
fn reqwest_free_post(base: &str, body: &serde_json::Value) -> serde_json::Value {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://").trim_end_matches("/v1");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let text = body.to_string();
    write!(s, "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (_, body) = out.split_once("\r\n\r\n").unwrap();
    serde_json::from_str(body).unwrap()
}
