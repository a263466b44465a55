//! The mapping on plain facts: ids, GenAI attributes from the stored usage, events, errors, and
//! content that never carries a secret.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::map::Ended;
use super::*;
use crate::core::stream::UsageCounts;

fn session() -> SessionFacts {
    SessionFacts {
        id: 7,
        name: "codex run".to_string(),
        source: "proxy".to_string(),
        created_us: 1_700_000_000_000_000,
        agent: None,
        place: None,
    }
}

fn request(id: i64, started_us: i64) -> RequestFacts {
    RequestFacts {
        request_id: id,
        model: Some("gpt-5.5".to_string()),
        dialect: Some("standard".to_string()),
        provider: Some("openai".to_string()),
        method: "POST".to_string(),
        url: "https://api.openai.com/v1/responses?api-key=sk-abcdefghijklmnopqrstuvwxyz012345"
            .to_string(),
        status: Some(200),
        started_us: Some(started_us),
        total_us: Some(2_000_000),
        ended: Ended::Completed,
        response_id: Some(format!("resp_{id}")),
        server_model: Some("gpt-5.5-2026-10-01".to_string()),
        usage: Some(UsageCounts {
            input_tokens: Some(1200),
            cached_input_tokens: Some(1024),
            cache_write_input_tokens: Some(128),
            output_tokens: Some(30),
            reasoning_output_tokens: Some(10),
            total_tokens: Some(1230),
        }),
        first_event_us: Some(100_000),
        first_text_us: Some(400_000),
        events: 12,
        reasoning_effort: Some("medium".to_string()),
        prompt_cache_key: Some("conv-1".to_string()),
        input: None,
        output_text: None,
    }
}

#[test]
fn one_span_per_request_under_the_session_span() {
    let s = session();
    let requests = [
        request(11, s.created_us + 1_000_000),
        request(12, s.created_us + 5_000_000),
    ];
    let root = session_span(&s, &requests, None);
    let spans = request_spans(&s, &requests, None, SpanOptions::default(), None)
        .expect("no content to redact");
    assert_eq!(spans.len(), 2);
    assert_eq!(root.trace_id, ids::trace_id(7, s.created_us));
    assert_eq!(root.parent_span_id, None);
    assert_eq!(
        root.start_unix_nanos,
        (s.created_us + 1_000_000) as u64 * 1000
    );
    assert_eq!(
        root.end_unix_nanos,
        (s.created_us + 7_000_000) as u64 * 1000
    );
    for span in &spans {
        assert_eq!(span.trace_id, root.trace_id);
        assert_eq!(span.parent_span_id, Some(root.span_id));
        assert_eq!(span.kind, SpanKind::Client);
        assert_eq!(span.name, "chat gpt-5.5");
    }
    assert_ne!(spans[0].span_id, spans[1].span_id);
    let a = &spans[0];
    let get = |k: &str| a.attribute(k).cloned();
    assert_eq!(
        get("gen_ai.operation.name"),
        Some(AttrValue::Str("chat".into()))
    );
    assert_eq!(
        get("gen_ai.provider.name"),
        Some(AttrValue::Str("openai".into()))
    );
    assert_eq!(
        get("gen_ai.request.model"),
        Some(AttrValue::Str("gpt-5.5".into()))
    );
    assert_eq!(
        get("gen_ai.response.model"),
        Some(AttrValue::Str("gpt-5.5-2026-10-01".into()))
    );
    assert_eq!(
        get("gen_ai.response.id"),
        Some(AttrValue::Str("resp_11".into()))
    );
    assert_eq!(get("gen_ai.usage.input_tokens"), Some(AttrValue::Int(1200)));
    assert_eq!(get("gen_ai.usage.output_tokens"), Some(AttrValue::Int(30)));
    assert_eq!(
        get("gen_ai.usage.cache_read.input_tokens"),
        Some(AttrValue::Int(1024))
    );
    assert_eq!(
        get("gen_ai.usage.cache_creation.input_tokens"),
        Some(AttrValue::Int(128))
    );
    assert_eq!(
        get("gen_ai.request.reasoning_effort"),
        Some(AttrValue::Str("medium".into()))
    );
    assert_eq!(
        get("gen_ai.conversation.id"),
        Some(AttrValue::Str("conv-1".into()))
    );
    assert_eq!(
        get("server.address"),
        Some(AttrValue::Str("api.openai.com".into()))
    );
    assert_eq!(get("server.port"), Some(AttrValue::Int(443)));
    assert_eq!(
        get("promptwire.transport"),
        Some(AttrValue::Str("http".into()))
    );
    let url = get("url.full").and_then(|v| v.as_str().map(str::to_string));
    assert!(
        url.as_deref().is_some_and(|u| !u.contains("sk-abc")),
        "{url:?}"
    );
    let events: Vec<(&str, u64)> = a
        .events
        .iter()
        .map(|e| (e.name.as_str(), e.time_unix_nanos))
        .collect();
    let start = (s.created_us + 1_000_000) as u64 * 1000;
    assert_eq!(
        events,
        vec![
            ("promptwire.first_token", start + 400_000_000),
            ("promptwire.stream_end", start + 2_000_000_000),
        ]
    );
    assert_eq!(a.status, SpanStatus::Unset);
}

#[test]
fn ids_are_stable_and_distinct() {
    let t = ids::trace_id(1, 10);
    assert_eq!(t, ids::trace_id(1, 10));
    assert_ne!(t, ids::trace_id(1, 11));
    assert_ne!(t, ids::trace_id(2, 10));
    assert_ne!(ids::request_span_id(&t, 1), ids::request_span_id(&t, 2));
    assert_ne!(ids::session_span_id(&t), ids::request_span_id(&t, 0));
    assert_eq!(ids::hex(&[0, 1, 0xab]), "0001ab");
}

#[test]
fn a_failed_request_is_an_error_span() {
    let s = session();
    let mut r = request(3, s.created_us);
    r.ended = Ended::Failed {
        class: Some(crate::core::stream::ErrorClass::QuotaExceeded),
        message: Some("quota exceeded for key sk-abcdefghijklmnopqrstuvwxyz012345".to_string()),
    };
    r.method = "WS".to_string();
    r.status = Some(101);
    let spans = request_spans(&s, &[r], None, SpanOptions::default(), None).expect("mapped");
    let a = &spans[0];
    assert_eq!(
        a.attribute("error.type"),
        Some(&AttrValue::Str("quota_exceeded".into()))
    );
    assert_eq!(
        a.attribute("promptwire.transport"),
        Some(&AttrValue::Str("websocket".into()))
    );
    assert_eq!(a.attribute("http.response.status_code"), None);
    match &a.status {
        SpanStatus::Error(m) => assert!(m.starts_with("quota exceeded") && !m.contains("sk-abc")),
        other => panic!("expected an error status, got {other:?}"),
    }
}

#[test]
fn content_only_when_asked_and_always_redacted() {
    let s = session();
    let mut r = request(4, s.created_us);
    r.input = Some(json!({
        "instructions": "You are Codex.",
        "input": [{"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "my key is sk-abcdefghijklmnopqrstuvwxyz012345"}]}]
    }));
    r.output_text = Some(
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl done".to_string(),
    );
    let without = request_spans(
        &s,
        std::slice::from_ref(&r),
        None,
        SpanOptions::default(),
        None,
    )
    .expect("mapped");
    assert_eq!(without[0].attribute("gen_ai.input.messages"), None);
    assert_eq!(without[0].attribute("output.value"), None);
    let with = request_spans(&s, &[r], None, SpanOptions { content: true }, None).expect("mapped");
    let all: String = with[0]
        .attributes
        .iter()
        .map(|(k, v)| format!("{k}={v:?}\n"))
        .collect();
    assert!(all.contains("gen_ai.input.messages"), "{all}");
    assert!(all.contains("gen_ai.system_instructions"), "{all}");
    assert!(all.contains("my key is"), "{all}");
    assert!(all.contains(" done"), "{all}");
    assert!(!all.contains("sk-abc"), "{all}");
    assert!(!all.contains("eyJhbGci"), "{all}");
}

/// A subagent's session: in its root's trace, its session span a child of its parent's (the
/// root's session span, or a middle agent's), named by its thread and kind; its requests are
/// children of its own session span.
#[test]
fn a_subagent_session_goes_into_its_runs_trace_under_its_parent() {
    use crate::core::anatomy::AgentTag;
    let root = session();
    let root_span = session_span(&root, &[], None);
    let child = SessionFacts {
        id: 9,
        agent: Some(AgentTag {
            thread: "child".into(),
            parent: Some("root".into()),
            kind: Some("collab_spawn".into()),
        }),
        place: Some(AgentPlace {
            root: (root.id, root.created_us),
            parent: root.id,
        }),
        ..session()
    };
    let requests = vec![request(31, 1_700_000_001_000_000)];
    let span = session_span(&child, &requests, None);
    assert_eq!(
        (span.trace_id, span.parent_span_id),
        (root_span.trace_id, Some(root_span.span_id))
    );
    assert_ne!(span.span_id, root_span.span_id);
    assert_eq!(
        (
            span.attribute("gen_ai.agent.id")
                .and_then(AttrValue::as_str),
            span.attribute("gen_ai.agent.name")
                .and_then(AttrValue::as_str),
            span.attribute("promptwire.agent.parent_thread")
                .and_then(AttrValue::as_str),
        ),
        (Some("child"), Some("collab_spawn"), Some("root"))
    );
    let spans =
        request_spans(&child, &requests, None, SpanOptions::default(), None).expect("spans");
    assert_eq!(
        (spans[0].trace_id, spans[0].parent_span_id),
        (root_span.trace_id, Some(span.span_id))
    );
    // A grandchild: under the child's session span, in the same trace.
    let grandchild = SessionFacts {
        id: 11,
        place: Some(AgentPlace {
            root: (root.id, root.created_us),
            parent: child.id,
        }),
        ..child.clone()
    };
    let deep = session_span(&grandchild, &[], None);
    assert_eq!(
        (deep.trace_id, deep.parent_span_id),
        (root_span.trace_id, Some(span.span_id))
    );
}
