//! Reading the action from a reply: from its native or text tool calls, its JSON or its
//! prose, never from its reasoning; what could not be read is kept as the reason to tell the
//! model.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use traparena_model::{Reply, ResponseMessage, tool_calls_in_text};
use traparena_task::Action;

use super::{LlmAgent, PastTurn, Protocol};
use crate::actions::{action_from_call, action_from_text, action_names, parse_action};
use crate::error::ActionError;

impl LlmAgent {
    /// Reads the action from a reply.
    pub(super) fn read_reply(
        &self,
        message: &ResponseMessage,
        finish_reason: Option<&str>,
        step: u32,
    ) -> (Option<Action>, Option<String>, Option<String>, PastTurn) {
        // The action is read from the answer only: a think block may hold drafts of actions.
        let reply = Reply::of(message);
        let content = reply.answer.clone();
        let text = content.as_deref().unwrap_or("");
        let mut calls = message.tool_calls.clone();
        // A server without a tool-call parser passes the model's call through as text.
        let in_text = if calls.is_empty() {
            tool_calls_in_text(text, &action_names())
        } else {
            Vec::new()
        };
        if self.config.protocol == Protocol::Tools && calls.is_empty() {
            calls.clone_from(&in_text);
        }
        // Ids the server left empty, or sent twice, are made unique: each is answered once.
        let mut seen = BTreeSet::new();
        for (k, c) in calls.iter_mut().enumerate() {
            if c.id.trim().is_empty() || !seen.insert(c.id.clone()) {
                c.id = format!("call_{step}_{k}");
                seen.insert(c.id.clone());
            }
        }
        let parsed = match (self.config.protocol, calls.first(), in_text.first()) {
            (Protocol::Tools, Some(call), _) => action_from_call(call),
            (_, _, Some(call)) => action_from_call(call),
            (Protocol::Json, _, _) => match serde_json::from_str::<Value>(text.trim()) {
                Ok(v) => parse_action(v),
                Err(_) => action_from_text(text),
            },
            _ => action_from_text(text),
        };
        let parsed = match parsed {
            Err(_) if reply.answer.is_none() && reply.cut_off_in_reasoning => {
                Err(ActionError::CutOffInReasoning)
            }
            Err(_) if reply.answer.is_none() && reply.reasoning.is_some() => {
                Err(ActionError::ReasoningOnly)
            }
            other => other,
        };
        let raw = if message.tool_calls.is_empty() {
            Some(text.to_owned())
        } else {
            Some(json!({"content": content, "tool_calls": calls}).to_string())
        };
        // Only the tools protocol answers tool calls; elsewhere they are not part of the
        // conversation.
        if self.config.protocol != Protocol::Tools {
            calls.clear();
        }
        let (action, unreadable) = match parsed {
            Ok(a) => (Some(a), None),
            Err(e) => {
                let mut reason = e.to_string();
                if finish_reason == Some("length") {
                    reason.push_str(" (the reply was cut off at the response length limit)");
                }
                (None, Some(reason))
            }
        };
        (
            action,
            raw,
            reply.reasoning,
            PastTurn {
                content,
                calls,
                unreadable,
            },
        )
    }
}
