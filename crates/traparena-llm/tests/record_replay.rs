//! Record and replay: an episode recorded against the stub re-runs offline identically.

mod support;

use std::sync::Arc;

use serde_json::json;
use support::{Reply, Stub, StubClient, bounded};
use traparena_model::{
    Cassette, CassetteMode, ChatModel, ChatRequest, ChatResponse, Message, ModelError, Recorder,
    ResponseFormat, ScriptedModel, request_hash,
};

/// A small "episode": the second request depends on the first reply, and one request is
/// made twice with different answers.
async fn episode(model: &dyn ChatModel) -> Result<Vec<String>, ModelError> {
    let ask = ChatRequest::new(vec![Message::user("Next action?")])
        .with_temperature(0.7)
        .with_max_tokens(64)
        .with_seed(9);
    let mut out = Vec::new();
    let first = model.chat(&ask).await?;
    out.push(serde_json::to_string(&first).unwrap());
    let mut follow = ask.clone();
    follow.messages.push(first.message().unwrap().to_message());
    follow.messages.push(Message::user("And then?"));
    let formatted =
        follow.with_response_format(ResponseFormat::json_schema("a", json!({"type": "object"})));
    out.push(serde_json::to_string(&model.chat(&formatted).await?).unwrap());
    // The same request again: must replay the *second* recorded answer.
    out.push(serde_json::to_string(&model.chat(&ask).await?).unwrap());
    Ok(out)
}

fn script() -> Vec<Reply> {
    vec![
        Reply::text("read a.py", 10, 3),
        Reply::text("{\"action\": \"submit\"}", 20, 5),
        Reply::text("something else this time", 10, 4),
    ]
}

#[tokio::test]
async fn replay_is_identical_and_needs_no_server() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("episode.jsonl");
        let recorded = {
            let stub = Stub::start(script());
            let cassette = Cassette::shared(&path).unwrap();
            let rec = Recorder::new(
                Arc::new(stub.client()),
                cassette,
                CassetteMode::Record,
                "ep-1",
            );
            let out = episode(&rec).await.unwrap();
            assert_eq!(stub.request_count(), 3);
            out
        }; // the stub is gone from here on
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        assert_ne!(
            recorded[0], recorded[2],
            "identical requests got different answers"
        );

        // A fresh process would reopen the file: do the same.
        let cassette = Cassette::shared(&path).unwrap();
        let replay = Recorder::replay_only("test-model", cassette.clone(), "ep-1");
        let replayed = episode(&replay).await.unwrap();
        assert_eq!(replayed, recorded);
        // The components account what the replayed responses say: the recorded counts.
        let prompt_tokens: u64 = replayed
            .iter()
            .map(|r| {
                let r: ChatResponse = serde_json::from_str(r).unwrap();
                r.token_usage().prompt_tokens
            })
            .sum();
        assert_eq!(prompt_tokens, 40);

        // Twice more, to be sure occurrences restart per recorder.
        let again = Recorder::replay_only("test-model", cassette, "ep-1");
        assert_eq!(episode(&again).await.unwrap(), recorded);
    })
    .await;
}

#[tokio::test]
async fn missing_entries_are_a_clear_error() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let cassette = Cassette::shared(&path).unwrap();
        let req = ChatRequest::new(vec![Message::user("never recorded")]);
        let hash = request_hash("m", &req).unwrap();
        let replay = Recorder::replay_only("m", cassette.clone(), "ep");
        let err = replay.chat(&req).await.unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, ModelError::NotRecorded { occurrence: 0, .. }),
            "{text}"
        );
        assert!(
            text.contains(&format!("no recorded response for request {hash}")),
            "{text}"
        );
        assert!(text.contains("c.jsonl"), "{text}");

        // Replay mode never calls the wrapped model, even when there is one.
        let fake = Arc::new(ScriptedModel::new("m", [ChatResponse::from_text("m", "x")]));
        let strict = Recorder::new(fake.clone(), cassette, CassetteMode::Replay, "ep");
        assert!(matches!(
            strict.chat(&req).await,
            Err(ModelError::NotRecorded { .. })
        ));
        assert!(fake.requests().is_empty());

        // A different model name is a different request.
        let dir2 = tempfile::tempdir().unwrap();
        let c2 = Cassette::shared(dir2.path().join("c.jsonl")).unwrap();
        let rec = Recorder::new(fake.clone(), c2.clone(), CassetteMode::Record, "ep");
        rec.chat(&req).await.unwrap();
        let other = Recorder::replay_only("other-model", c2, "ep");
        assert!(matches!(
            other.chat(&req).await,
            Err(ModelError::NotRecorded { .. })
        ));
    })
    .await;
}

#[tokio::test]
async fn auto_mode_records_once_then_replays() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auto.jsonl");
        let stub = Stub::start(script());
        let client = Arc::new(stub.client());
        let first = {
            let rec = Recorder::new(
                client.clone(),
                Cassette::shared(&path).unwrap(),
                CassetteMode::Auto,
                "ep",
            );
            episode(&rec).await.unwrap()
        };
        assert_eq!(stub.request_count(), 3);
        let rec = Recorder::new(
            client,
            Cassette::shared(&path).unwrap(),
            CassetteMode::Auto,
            "ep",
        );
        assert_eq!(episode(&rec).await.unwrap(), first);
        assert_eq!(
            stub.request_count(),
            3,
            "auto mode replayed without calling the server"
        );
    })
    .await;
}

#[tokio::test]
async fn scopes_keep_episodes_apart_in_one_cassette() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let cassette = Cassette::shared(dir.path().join("shared.jsonl")).unwrap();
        let req = ChatRequest::new(vec![Message::user("same first prompt")]).with_temperature(0.7);
        let fake = Arc::new(ScriptedModel::new(
            "m",
            [
                ChatResponse::from_text("m", "sample 0"),
                ChatResponse::from_text("m", "sample 1"),
            ],
        ));
        for (scope, want) in [("sample-0", "sample 0"), ("sample-1", "sample 1")] {
            let rec = Recorder::new(fake.clone(), cassette.clone(), CassetteMode::Record, scope);
            assert_eq!(rec.chat(&req).await.unwrap().text(), Some(want));
        }
        let reopened = Cassette::shared(cassette.path()).unwrap();
        for (scope, want) in [("sample-1", "sample 1"), ("sample-0", "sample 0")] {
            let rep = Recorder::replay_only("m", reopened.clone(), scope);
            assert_eq!(rep.chat(&req).await.unwrap().text(), Some(want));
        }
    })
    .await;
}

#[tokio::test]
async fn failed_calls_are_not_recorded() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let cassette = Cassette::shared(dir.path().join("c.jsonl")).unwrap();
        let fake = Arc::new(ScriptedModel::new("m", []));
        let rec = Recorder::new(fake, cassette.clone(), CassetteMode::Record, "ep");
        let err = rec
            .chat(&ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::ScriptExhausted { call: 1, .. }),
            "{err}"
        );
        assert!(cassette.is_empty());
    })
    .await;
}
