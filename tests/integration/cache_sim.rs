//! The cache simulator against vectors written from the documented rules (WIRE_SPEC §19.1): an
//! append-only session under both cache models, a change between two breakpoints, explicit mode
//! without a breakpoint, TTL expiry after a 31-minute gap, a changed cache key, a model switch.
//!
//! The expected figures are computed here from the rules and the rendered segments' token counts
//! (read from the ledger's rendered view, the analysis's measure of each segment): the offset of
//! a breakpoint is the running count at the end of its item, a prefix read is the shared tokens
//! from 1,024 in 128-token steps.

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, CacheKind, Ledger, Rules};
use promptwire::core::prefix::{RequestMeta, Session};
use serde_json::{Value, json};

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

/// About `n` tokens of text (distinct per `tag`).
fn text(tag: &str, n: usize) -> String {
    format!("{tag}: {}", "lorem ipsum ".repeat(n / 2))
}

fn body(model: &str, key: &str, items: &[Value]) -> Value {
    json!({
        "model": model,
        "instructions": text("instructions", 1200),
        "input": items,
        "prompt_cache_key": key,
        "stream": true,
    })
}

fn session(bodies: &[Value], times: &[(i64, i64)]) -> Session {
    let mut session = Session::default();
    for (i, b) in bodies.iter().enumerate() {
        let meta = RequestMeta {
            sent_at_ms: times.get(i).map(|t| t.0),
            finished_at_ms: times.get(i).map(|t| t.1),
            ..RequestMeta::default()
        };
        session.push_body(b, meta).expect("body");
    }
    session
}

fn ledger_of(session: &Session) -> Ledger {
    ledger::ledger(session, &Rules::bundled())
}

/// Tokens of request `i` up to the end of body input item `k` (the header included).
fn through(session: &Session, i: usize, k: usize) -> u64 {
    let l = ledger_of(session);
    let layout = &l.rendered.layouts[i];
    layout.cum[layout.item_parts(k).expect("item").end]
}

fn total(session: &Session, i: usize) -> u64 {
    ledger_of(session).rows[i].tokens
}

fn steps(tokens: u64) -> u64 {
    if tokens < 1024 {
        0
    } else {
        1024 + (tokens - 1024) / 128 * 128
    }
}

fn grouped(n: u64) -> String {
    promptwire::core::format::grouped(n)
}

/// (read, write, uncached) of one request.
type Triple = (u64, u64, u64);

/// (read, write, uncached) per request, and the reasons.
fn run(session: &Session) -> (Vec<Triple>, Vec<String>, Vec<CacheKind>) {
    let l = ledger_of(session);
    let predictions: Vec<_> = l.rows.iter().map(|r| &r.prediction).collect();
    (
        predictions
            .iter()
            .map(|p| {
                (
                    p.predicted.read_tokens,
                    p.predicted.write_tokens,
                    p.predicted.uncached_tokens,
                )
            })
            .collect(),
        predictions.iter().map(|p| p.reason.clone()).collect(),
        predictions.iter().map(|p| p.cache_model).collect(),
    )
}

fn conversation() -> Vec<Vec<Value>> {
    let u1 = msg("user", &text("first question", 300));
    let a1 = msg("assistant", &text("first answer", 400));
    let u2 = msg("user", &text("second question", 200));
    let a2 = msg("assistant", &text("second answer", 400));
    let u3 = msg("user", &text("third question", 200));
    vec![
        vec![u1.clone()],
        vec![u1.clone(), a1.clone(), u2.clone()],
        vec![u1, a1, u2, a2, u3],
    ]
}

#[test]
fn cache_sim_append_only_under_both_models() {
    let turns = conversation();
    // Breakpoints: each request reads the previous request's implicit breakpoint (the end of
    // its latest user message) and writes its own.
    let lite = session(
        &turns
            .iter()
            .map(|t| body("gpt-6-sol", "thread", t))
            .collect::<Vec<_>>(),
        &[],
    );
    let (t0, t1, t2) = (total(&lite, 0), total(&lite, 1), total(&lite, 2));
    assert_eq!(through(&lite, 1, 0), t0);
    let (tokens, reasons, kinds) = run(&lite);
    assert_eq!(tokens, vec![(0, t0, 0), (t0, t1 - t0, 0), (t1, t2 - t1, 0)]);
    assert_eq!(kinds, vec![CacheKind::Breakpoints; 3]);
    assert_eq!(
        reasons,
        vec![
            format!(
                "read nothing: the first request on its route (model, prompt_cache_key, service \
                 tier and first ~256 tokens); wrote 1 breakpoint, {} tokens",
                grouped(t0)
            ),
            format!(
                "read {} tokens up to the breakpoint of request 0 (the end of \
                 /input/0/content/0); wrote 1 breakpoint, {} tokens",
                grouped(t0),
                grouped(t1 - t0)
            ),
            format!(
                "read {} tokens up to the breakpoint of request 1 (the end of \
                 /input/2/content/0); wrote 1 breakpoint, {} tokens",
                grouped(t1),
                grouped(t2 - t1)
            ),
        ]
    );

    // Prefix: the longest common prefix, from 1,024 in 128-token steps; writes free.
    let old = session(
        &turns
            .iter()
            .map(|t| body("gpt-5.5", "thread", t))
            .collect::<Vec<_>>(),
        &[],
    );
    let (p0, p1, p2) = (total(&old, 0), total(&old, 1), total(&old, 2));
    let (tokens, _, kinds) = run(&old);
    assert_eq!(
        tokens,
        vec![
            (0, 0, p0),
            (steps(p0), 0, p1 - steps(p0)),
            (steps(p1), 0, p2 - steps(p1))
        ]
    );
    assert_eq!(kinds, vec![CacheKind::Prefix; 3]);
}

#[test]
fn cache_sim_change_between_breakpoints_falls_back_to_the_earlier_one() {
    let turns = conversation();
    let mut edited = turns[2].clone();
    // The assistant message between the breakpoints of request 0 (end of /input/0) and
    // request 1 (end of /input/2) changes.
    edited[1] = msg("assistant", &text("first answer, edited", 400));
    let s = session(
        &[
            body("gpt-6-sol", "thread", &turns[0]),
            body("gpt-6-sol", "thread", &turns[1]),
            body("gpt-6-sol", "thread", &edited),
        ],
        &[],
    );
    let (t0, t1, t2) = (total(&s, 0), total(&s, 1), total(&s, 2));
    let (tokens, reasons, _) = run(&s);
    assert_eq!(tokens, vec![(0, t0, 0), (t0, t1 - t0, 0), (t0, t2 - t0, 0)]);
    assert_eq!(
        reasons[2],
        format!(
            "read {} tokens up to the breakpoint of request 0 (the end of /input/0/content/0); \
             wrote 1 breakpoint, {} tokens",
            grouped(t0),
            grouped(t2 - t0)
        )
    );
}

#[test]
fn cache_sim_explicit_mode_without_a_breakpoint_caches_nothing() {
    let turns = conversation();
    let bodies: Vec<Value> = turns
        .iter()
        .map(|t| {
            let mut b = body("gpt-6-sol", "thread", t);
            b["prompt_cache_options"] = json!({"mode": "explicit"});
            b
        })
        .collect();
    let s = session(&bodies, &[]);
    let (tokens, reasons, _) = run(&s);
    let totals: Vec<u64> = (0..3).map(|i| total(&s, i)).collect();
    assert_eq!(
        tokens,
        totals.iter().map(|t| (0, 0, *t)).collect::<Vec<_>>()
    );
    assert_eq!(
        reasons,
        vec![
            "explicit mode (prompt_cache_options.mode) and no breakpoint: nothing is read or \
             written"
                .to_string();
            3
        ]
    );
}

#[test]
fn cache_sim_ttl_expires_after_a_31_minute_gap() {
    let turns = conversation();
    let bodies: Vec<Value> = turns[..2]
        .iter()
        .map(|t| body("gpt-6-sol", "thread", t))
        .collect();
    let minute = 60_000;
    // Request 0 finishes at 1 s; request 1 is sent 31 minutes (past the 30-minute default
    // TTL) or 29 minutes after that.
    let late = session(
        &bodies,
        &[(0, 1000), (1000 + 31 * minute, 2000 + 31 * minute)],
    );
    let soon = session(
        &bodies,
        &[(0, 1000), (1000 + 29 * minute, 2000 + 29 * minute)],
    );
    let (t0, t1) = (total(&late, 0), total(&late, 1));
    let (tokens, reasons, _) = run(&late);
    assert_eq!(tokens, vec![(0, t0, 0), (0, t1, 0)]);
    assert_eq!(
        reasons[1],
        format!(
            "read nothing: request 0's cache expired (idle 31 min past its retention); wrote 1 \
             breakpoint, {} tokens",
            grouped(t1)
        )
    );
    assert_eq!(run(&soon).0, vec![(0, t0, 0), (t0, t1 - t0, 0)]);
    // A 12-hour TTL asked for by the request keeps it.
    let kept: Vec<Value> = bodies
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b["prompt_cache_options"] = json!({"ttl": "12h"});
            b
        })
        .collect();
    let kept = session(
        &kept,
        &[(0, 1000), (1000 + 31 * minute, 2000 + 31 * minute)],
    );
    assert_eq!(run(&kept).0, vec![(0, t0, 0), (t0, t1 - t0, 0)]);
}

#[test]
fn cache_sim_changed_cache_key_and_model_switch_route_elsewhere() {
    let turns = conversation();
    let s = session(
        &[
            body("gpt-6-sol", "thread", &turns[0]),
            body("gpt-6-sol", "another", &turns[1]),
        ],
        &[],
    );
    let (t0, t1) = (total(&s, 0), total(&s, 1));
    let (tokens, reasons, _) = run(&s);
    assert_eq!(tokens, vec![(0, t0, 0), (0, t1, 0)]);
    assert_eq!(
        reasons[1],
        format!(
            "read nothing: the first request on its route (model, prompt_cache_key, service tier \
             and first ~256 tokens); wrote 1 breakpoint, {} tokens",
            grouped(t1)
        )
    );

    // gpt-6-sol, then gpt-5.5 (another model: its own route, and the prefix model), then
    // gpt-6-sol again: it reads request 0's breakpoint.
    let s = session(
        &[
            body("gpt-6-sol", "thread", &turns[0]),
            body("gpt-5.5", "thread", &turns[1]),
            body("gpt-6-sol", "thread", &turns[2]),
        ],
        &[],
    );
    let (t0, t1, t2) = (total(&s, 0), total(&s, 1), total(&s, 2));
    let (tokens, _, kinds) = run(&s);
    assert_eq!(tokens, vec![(0, t0, 0), (0, 0, t1), (t0, t2 - t0, 0)]);
    assert_eq!(
        kinds,
        vec![
            CacheKind::Breakpoints,
            CacheKind::Prefix,
            CacheKind::Breakpoints
        ]
    );
}

#[test]
fn cache_sim_what_if_breakpoint_keeps_the_stable_prefix() {
    // A stable developer message, then a user message that changes every request: the only
    // breakpoint is at the end of the user message, so request 1 reads nothing (no fallback to
    // the unmarked stable prefix) — unless an explicit breakpoint follows /input/0.
    let stable = msg("developer", &text("stable context", 3000));
    let bodies: Vec<Value> = ["one", "two"]
        .iter()
        .map(|q| {
            body(
                "gpt-6-sol",
                "thread",
                &[stable.clone(), msg("user", &text(q, 100))],
            )
        })
        .collect();
    let s = session(&bodies, &[]);
    let (t0, t1, kept) = (total(&s, 0), total(&s, 1), through(&s, 1, 0));
    assert_eq!(run(&s).0, vec![(0, t0, 0), (0, t1, 0)]);
    let l = ledger_of(&s);
    let hazards: Vec<(&str, usize, String)> = l
        .hazards
        .iter()
        .map(|h| (h.code, h.request, h.fix.clone()))
        .collect();
    assert_eq!(
        hazards,
        vec![(
            "stable_prefix_behind_break",
            1,
            "put an explicit prompt_cache_breakpoint on the last stable item (what-if \
             breakpoint-after:0), or keep changing content after the latest user message"
                .to_string()
        )]
    );
    let what_if = l
        .what_if(
            &s,
            &Rules::bundled(),
            &["breakpoint-after:0".parse().expect("edit")],
        )
        .expect("what-if");
    let after: Vec<Triple> = what_if
        .requests
        .iter()
        .map(|r| {
            let p = &r.tokens;
            (p.read_tokens, p.write_tokens, p.uncached_tokens)
        })
        .collect();
    // Request 0 writes both breakpoints (up to its end); request 1 reads the explicit one and
    // writes its own from there.
    assert_eq!(after, vec![(0, t0, 0), (kept, t1 - kept, 0)]);
    assert_eq!(what_if.read_tokens_gained, kept as i64);
    // gpt-6-sol: $2 input, $0.20 cached, $2.50 cache writes per 1M (assets/prices.json).
    let saved = kept as f64 * (2.5 - 0.2) / 1e6;
    let got = what_if.usd_saved.expect("priced");
    assert!((got - saved).abs() < 1e-12, "{got} vs {saved}");
}

fn what_if_reads(s: &Session, edit: &str) -> (Vec<u64>, i64) {
    let w = ledger_of(s)
        .what_if(s, &Rules::bundled(), &[edit.parse().expect("edit")])
        .expect("what-if");
    (
        w.requests.iter().map(|r| r.tokens.read_tokens).collect(),
        w.read_tokens_gained,
    )
}

fn hazard_codes(s: &Session) -> Vec<(&'static str, usize)> {
    ledger_of(s)
        .hazards
        .iter()
        .map(|h| (h.code, h.request))
        .collect()
}

#[test]
fn cache_sim_what_if_undo_tools_and_move_instructions() {
    let turns = conversation();
    let tool = |keys: [&str; 2]| {
        let mut params = serde_json::Map::new();
        for k in keys {
            params.insert(k.to_string(), json!({"type": "string"}));
        }
        json!([{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": params}}])
    };
    let mut b0 = body("gpt-6-sol", "thread", &turns[0]);
    let mut b1 = body("gpt-6-sol", "thread", &turns[1]);
    b0["tools"] = tool(["cmd", "cwd"]);
    // The same tool with its schema's keys in another order: another prompt.
    b1["tools"] = tool(["cwd", "cmd"]);
    let s = session(&[b0.clone(), b1.clone()], &[]);
    let t0 = total(&s, 0);
    assert_eq!(run(&s).0[1].0, 0);
    assert_eq!(hazard_codes(&s), vec![("tools_changed", 1)]);
    assert_eq!(what_if_reads(&s, "undo-tools:1"), (vec![0, t0], t0 as i64));

    // Changed instructions: moved into an appended developer message, request 1 reads request
    // 0's breakpoint again.
    let mut b1 = b1;
    b1["tools"] = b0["tools"].clone();
    b1["instructions"] = json!(text("instructions, changed", 1200));
    let s = session(&[b0, b1], &[]);
    assert_eq!(run(&s).0[1].0, 0);
    assert_eq!(
        what_if_reads(&s, "move-instructions:1"),
        (vec![0, t0], t0 as i64)
    );
}

#[test]
fn cache_sim_what_if_close_gap_and_ttl_and_the_idle_hazard() {
    let turns = conversation();
    let bodies: Vec<Value> = turns[..2]
        .iter()
        .map(|t| body("gpt-6-sol", "thread", t))
        .collect();
    let minute = 60_000;
    let late = session(
        &bodies,
        &[(0, 1000), (1000 + 31 * minute, 2000 + 31 * minute)],
    );
    let t0 = total(&late, 0);
    assert_eq!(hazard_codes(&late), vec![("idle_gap", 1)]);
    assert_eq!(
        what_if_reads(&late, "close-gap:1"),
        (vec![0, t0], t0 as i64)
    );
    assert_eq!(what_if_reads(&late, "ttl:12h"), (vec![0, t0], t0 as i64));
    assert_eq!(what_if_reads(&late, "ttl:30m"), (vec![0, 0], 0));
}

#[test]
fn cache_sim_hazards_key_rate_and_stuck_cache() {
    let turns = conversation();
    let s = session(
        &[
            body("gpt-5.5", "thread", &turns[0]),
            body("gpt-5.5", "other", &turns[1]),
        ],
        &[],
    );
    assert_eq!(hazard_codes(&s), vec![("cache_key_changed", 1)]);

    // 17 requests 3 s apart on one route: the 16th is past 15 within a minute.
    let same: Vec<Value> = (0..17)
        .map(|_| body("gpt-5.5", "thread", &turns[0]))
        .collect();
    let times: Vec<(i64, i64)> = (0..17).map(|i| (i * 3000, i * 3000 + 1000)).collect();
    assert_eq!(
        hazard_codes(&session(&same, &times)),
        vec![("overflow_rate", 15)]
    );

    // The server reports the same cached count while the prompt grows and what each request
    // shares with the one before it runs far past it: stuck.
    let mut s = Session::default();
    let mut items = vec![msg("user", &text("q0", 3000))];
    for i in 0..4 {
        let meta = RequestMeta {
            reported_cached_tokens: Some(1280),
            ..RequestMeta::default()
        };
        s.push_body(&body("gpt-5.5", "thread", &items), meta)
            .expect("body");
        items.push(msg("assistant", &text(&format!("a{i}"), 300)));
        items.push(msg("user", &text(&format!("q{}", i + 1), 200)));
    }
    let l = ledger_of(&s);
    let stuck: Vec<(&str, usize, String)> = l
        .hazards
        .iter()
        .map(|h| (h.code, h.request, h.message.clone()))
        .collect();
    assert_eq!(
        stuck,
        vec![(
            "cache_stuck",
            1,
            format!(
                "requests 1 to 3 read 1,280 tokens each while their input grows from {} to {}: \
                 only the start of the prompt is reused",
                grouped(total(&s, 1)),
                grouped(total(&s, 3))
            )
        )]
    );
    // …and the server reading far less than the rules predict is a finding.
    let findings: Vec<Option<String>> = l.rows.iter().map(|r| r.finding.clone()).collect();
    let predicted: Vec<u64> = (0..4).map(|i| steps(total(&s, i))).collect();
    let less = |i: usize| {
        Some(format!(
            "server read 1,280 where the rules predict {} (beyond the estimate's ±1,024): \
             evicted, overflowed past ~15 requests/min, or routed elsewhere",
            grouped(predicted[i])
        ))
    };
    assert_eq!(
        findings,
        vec![
            // A first request reads what earlier sessions left warm: no finding.
            None,
            less(0),
            less(1),
            less(2),
        ]
    );
}
