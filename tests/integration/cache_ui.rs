//! The Sessions prefix view shows the cache's dollars (issue 21): paid / ideal / lost under each
//! request's own cache model for a priced model, "price unknown" for a model whose price row
//! nobody checked — on the whole app (egui_kittest) over a real database.

use crate::support::ui as ui_support;

use crate::support::cli::run;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::app::session_view::MainView;
use promptwire::core::cache;
use promptwire::core::format::grouped;
use promptwire::core::models::cache::CacheModels;
use promptwire::core::prefix::{PriceTable, RequestMeta, Session};
use promptwire::store::{NewRequest, NewSession, Source, Store};
use serde_json::{Value, json};
use ui_support::{app_with, scratch_dir, wait_until};

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

fn bodies(model: &str) -> Vec<Value> {
    let stable = msg(
        "developer",
        &format!("stable: {}", "lorem ipsum ".repeat(1500)),
    );
    ["one", "two"]
        .iter()
        .map(|q| {
            json!({"model": model, "instructions": "Be brief.", "prompt_cache_key": "t",
                "input": [stable, msg("user", &format!("question {q}"))]})
        })
        .collect()
}

fn store_session(store: &mut Store, name: &str, model: &str) -> i64 {
    let id = store
        .create_session(&NewSession {
            name: name.to_string(),
            source: Source::Import,
            provider: None,
            model: Some(model.to_string()),
            created_us: 1_000,
        })
        .expect("session");
    for b in bodies(model) {
        let bytes = serde_json::to_vec(&b).expect("body");
        store
            .add_request(
                id,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    provider: Some("openai".to_string()),
                    ..NewRequest::post("https://api.openai.com/v1/responses", &bytes)
                },
            )
            .expect("request");
    }
    id
}

/// The cost line the view should show, from core's report of the same bodies.
fn expected(model: &str) -> String {
    let mut session = Session::default();
    for b in bodies(model) {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let report = cache::report(&session, &CacheModels::default(), &PriceTable::bundled());
    let t = &report.totals;
    let money = match &t.cost_usd {
        Some(d) => format!(
            "paid ${:.4} · ideal ${:.4} · lost ${:.4}",
            d.paid, d.ideal, d.lost
        ),
        None => format!("price unknown ({model})"),
    };
    format!(
        "{money} · predicted: read {}, wrote {}, uncached {} tokens · hazards: \
         stable_prefix_behind_break",
        grouped(t.read_tokens),
        grouped(t.write_tokens),
        grouped(t.uncached_tokens)
    )
}

#[test]
fn cache_ui_prefix_view_shows_paid_ideal_lost_or_price_unknown() {
    let db = scratch_dir("cache-ui").join("promptwire.sqlite");
    {
        let mut store = Store::open(&db).expect("db");
        store_session(&mut store, "priced", "gpt-6-sol");
        store_session(&mut store, "unpriced", "gpt-6-luna");
    }
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 2
    });
    let priced = expected("gpt-6-sol");
    assert!(priced.starts_with("paid $0.0"), "{priced}");
    for (label, model, line, chart) in [
        (
            "#1 priced · 2 req · gpt-6-sol",
            "gpt-6-sol",
            priced,
            "Input cost per request: paid 2 points, lost 2 points",
        ),
        (
            "#2 unpriced · 2 req · gpt-6-luna",
            "gpt-6-luna",
            expected("gpt-6-luna"),
            "Input cost per request: price unknown",
        ),
    ] {
        harness.get_by_label(label).click();
        wait_until(&mut harness, "session analysed", |s: &AppState| {
            s.browser
                .analysis
                .as_ref()
                .is_some_and(|a| a.prefix.requests()[0].shape.model == model)
        });
        harness.get_by_label(&line);
        harness.get_by_label(chart);
    }
    // The selected break says what it costs under the model's own rules.
    harness
        .get_by_label("#1 priced · 2 req · gpt-6-sol")
        .click();
    wait_until(&mut harness, "break selected", |s: &AppState| {
        s.browser.pair == Some((0, 1))
            && s.browser
                .analysis
                .as_ref()
                .is_some_and(|a| a.prefix.requests()[0].shape.model == "gpt-6-sol")
    });
    let mut session = Session::default();
    for b in bodies("gpt-6-sol") {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let report = cache::report(&session, &CacheModels::default(), &PriceTable::bundled());
    let second = &report.requests[1];
    let d = second.cost_usd.expect("priced");
    assert!(d.lost > 0.0);
    harness.get_by_label(&format!(
        "request 1 under the breakpoints cache: {} · lost ${:.4} (paid ${:.4}, ideal ${:.4})",
        second.prediction.reason, d.lost, d.paid, d.ideal
    ));
    harness.get_by_label(&format!(
        "! stable_prefix_behind_break: {} Fix: {}",
        report.hazards[0].message, report.hazards[0].fix
    ));
}

/// `promptwire diff --session ID --db DB --json [more…]`, parsed.
fn diff_json(db: &std::path::Path, session: i64, more: &[&str]) -> Value {
    let (id, path) = (session.to_string(), db.display().to_string());
    let mut args = vec!["diff", "--session", &id, "--db", &path, "--json"];
    args.extend(more);
    let out = run(&args, None);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string()
        ),
        (Some(0), String::new())
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn cache_ui_what_if_picker_shows_what_diff_what_if_computes() {
    let db = scratch_dir("cache-ui-whatif").join("promptwire.sqlite");
    let (priced, other) = {
        let mut store = Store::open(&db).expect("db");
        (
            store_session(&mut store, "priced", "gpt-6-sol"),
            store_session(&mut store, "other", "gpt-6-sol"),
        )
    };
    // What the CLI computes for the same session and edit.
    let after = diff_json(&db, priced, &["--what-if", "breakpoint-after:0"]);
    let baseline = diff_json(&db, priced, &[]);
    let usd = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_f64).expect(p);
    let tokens = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_u64).expect(p);
    let (before_paid, after_paid) = (
        usd(&after, "/what_if/before/cost_usd/paid"),
        usd(&after, "/summary/cost_usd/paid"),
    );
    let saved = usd(&after, "/what_if/usd_saved");
    assert!(saved > 0.0, "{after}");
    let headline = format!(
        "what if breakpoint-after:0: paid ${before_paid:.4} -> ${after_paid:.4} (saves ${saved:.4}) \
         · read {} -> {} tokens",
        grouped(tokens(&after, "/what_if/before/read_tokens")),
        grouped(tokens(&after, "/summary/cache_tokens/read_tokens")),
    );
    let field =
        |v: &Value, i: usize, f: &str| grouped(tokens(v, &format!("/requests/{i}/predicted/{f}")));
    let lines: Vec<String> = (0..2)
        .map(|i| {
            format!(
                "request {i}: read {} -> {} · wrote {} -> {} · uncached {} -> {} tokens",
                field(&baseline, i, "read_tokens"),
                field(&after, i, "read_tokens"),
                field(&baseline, i, "write_tokens"),
                field(&after, i, "write_tokens"),
                field(&baseline, i, "uncached_tokens"),
                field(&after, i, "uncached_tokens"),
            )
        })
        .collect();
    assert_ne!(
        lines[1],
        format!(
            "request 1: read {0} -> {0}",
            field(&baseline, 1, "read_tokens")
        )
    );

    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 2
    });
    harness
        .get_by_label("#1 priced · 2 req · gpt-6-sol")
        .click();
    wait_until(&mut harness, "session analysed", |s: &AppState| {
        s.browser
            .analysis
            .as_ref()
            .is_some_and(|a| a.session == priced)
    });
    harness.get_by_label("breakpoint after item").click();
    harness.run_steps(2);
    harness
        .get_by_role_and_label(Role::TextInput, "argument")
        .focus();
    harness.run_steps(1);
    harness
        .get_by_role_and_label(Role::TextInput, "argument")
        .type_text("0");
    harness.run_steps(2);
    harness.get_by_label("Run what-if").click();
    wait_until(&mut harness, "what-if done", |s: &AppState| {
        s.browser.whatif.result.is_some() || s.browser.whatif.error.is_some()
    });
    harness.run_steps(2);
    assert_eq!(
        ui_support::state(&harness).browser.whatif.error,
        None::<String>
    );
    harness.get_by_label(&headline);
    for line in &lines {
        harness.get_by_label(line);
    }
    // Another session: the what-if (running or done) goes with the one it was asked for.
    harness.get_by_label("Run what-if").click();
    harness.step();
    harness.get_by_label("#2 other · 2 req · gpt-6-sol").click();
    wait_until(&mut harness, "other analysed", |s: &AppState| {
        s.browser
            .analysis
            .as_ref()
            .is_some_and(|a| a.session == other)
    });
    harness.run_steps(5);
    let w = &ui_support::state(&harness).browser.whatif;
    assert_eq!(
        (w.result.is_none(), w.error.clone(), w.asked.clone()),
        (true, None, None)
    );
    assert!(harness.query_by_label(&headline).is_none());
}

/// A session whose hazards name requests other than the first break: a tool list changed at
/// request 2 and a stable prefix behind a changed message.
fn hazard_bodies() -> Vec<Value> {
    let stable = msg(
        "developer",
        &format!("stable: {}", "lorem ipsum ".repeat(1500)),
    );
    let tool =
        |name: &str| json!({"type": "function", "name": name, "parameters": {"type": "object"}});
    (0..4)
        .map(|i| {
            let tools = if i < 2 {
                vec![tool("a")]
            } else {
                vec![tool("a"), tool("b")]
            };
            json!({"model": "gpt-6-sol", "instructions": "Be brief.", "prompt_cache_key": "t",
                "tools": tools,
                "input": [stable, msg("user", &format!("question {i}"))]})
        })
        .collect()
}

#[test]
fn cache_ui_hazards_listed_with_fixes_and_clickable() {
    let db = scratch_dir("cache-ui-hazards").join("promptwire.sqlite");
    {
        let mut store = Store::open(&db).expect("db");
        let id = store
            .create_session(&NewSession {
                name: "hazards".to_string(),
                source: Source::Import,
                provider: None,
                model: Some("gpt-6-sol".to_string()),
                created_us: 1_000,
            })
            .expect("session");
        for b in hazard_bodies() {
            let bytes = serde_json::to_vec(&b).expect("body");
            store
                .add_request(
                    id,
                    &NewRequest {
                        dialect: Some("standard".to_string()),
                        provider: Some("openai".to_string()),
                        ..NewRequest::post("https://api.openai.com/v1/responses", &bytes)
                    },
                )
                .expect("request");
        }
    }
    let mut session = Session::default();
    for b in hazard_bodies() {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let report = cache::report(&session, &CacheModels::default(), &PriceTable::bundled());
    let rows: Vec<(usize, String)> = report
        .hazards
        .iter()
        .map(|h| {
            (
                h.request,
                format!(
                    "request {} · {}: {} Fix: {}",
                    h.request, h.code, h.message, h.fix
                ),
            )
        })
        .collect();
    let codes: Vec<(&str, usize)> = report.hazards.iter().map(|h| (h.code, h.request)).collect();
    assert_eq!(
        codes,
        vec![
            ("stable_prefix_behind_break", 1),
            ("tools_changed", 2),
            ("stable_prefix_behind_break", 3)
        ]
    );

    // Tall enough that the list is inside the analysis pane: at 1500x950 a click on it does not
    // land (not understood; the rows are laid out inside the pane's area).
    let mut harness = app_with((1500.0, 1400.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 1
    });
    harness
        .get_by_label("#1 hazards · 4 req · gpt-6-sol")
        .click();
    wait_until(&mut harness, "session analysed", |s: &AppState| {
        s.browser.analysis.is_some() && s.browser.selected == Some(0)
    });
    harness.run_steps(2);
    harness.get_by_label(&format!("Cache hazards ({})", rows.len()));
    for (request, text) in rows.iter().rev() {
        harness.get_by_label(text).click();
        wait_until(&mut harness, "hazard's request selected", |s: &AppState| {
            s.browser.selected == Some(*request) && s.browser.pair == Some((request - 1, *request))
        });
    }
}

/// The cost line core's report gives for `bodies(model)` under `table`.
fn cost_line(model: &str, table: &CacheModels) -> String {
    let mut session = Session::default();
    for b in bodies(model) {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let report = cache::report(&session, table, &PriceTable::bundled());
    let t = &report.totals;
    let d = t.cost_usd.expect("priced");
    let mut line = format!(
        "paid ${:.4} · ideal ${:.4} · lost ${:.4} · predicted: read {}, wrote {}, uncached {} tokens",
        d.paid,
        d.ideal,
        d.lost,
        grouped(t.read_tokens),
        grouped(t.write_tokens),
        grouped(t.uncached_tokens)
    );
    if !report.hazards.is_empty() {
        let codes: Vec<&str> = report.hazards.iter().map(|h| h.code).collect();
        line.push_str(&format!(" · hazards: {}", codes.join(", ")));
    }
    line
}

/// `cache-models.json` beside the database: applied (gpt-6-sol simulated by the prefix rules,
/// the note names the file), or — a bad file — refused whole with its line and column, the
/// built-in table used.
#[test]
fn cache_ui_cache_models_file_beside_the_database() {
    let good = r#"{"models": [{"prefix": "gpt-6-sol", "cache_model": "prefix"}]}"#;
    let bad = "{\"models\": [\n  {\"prefix\": \"gpt-6-sol\", \"cache_model\": \"lru\"}]}";
    let builtin = CacheModels::default();
    let table = CacheModels::from_json(good).expect("table");
    assert_ne!(
        cost_line("gpt-6-sol", &table),
        cost_line("gpt-6-sol", &builtin)
    );
    for (name, text, line, note) in [
        (
            "cache-ui-models-good",
            good,
            cost_line("gpt-6-sol", &table),
            "cache models: {path} (1 row)".to_string(),
        ),
        (
            "cache-ui-models-bad",
            bad,
            cost_line("gpt-6-sol", &builtin),
            "cache models not applied (built-in used): {path}: line 2, column 46: \
             models[0].cache_model: unknown variant `lru`, expected `prefix` or `breakpoints`"
                .to_string(),
        ),
    ] {
        let dir = scratch_dir(name);
        let db = dir.join("promptwire.sqlite");
        let file = dir.join("cache-models.json");
        std::fs::write(&file, text).expect("write");
        store_session(&mut Store::open(&db).expect("db"), "s", "gpt-6-sol");
        let note = note.replace("{path}", &file.display().to_string());
        let mut harness = app_with((1500.0, 950.0), Some(db));
        harness
            .get_by_role_and_label(Role::Button, "Sessions")
            .click();
        wait_until(&mut harness, "sessions listed", |s| {
            s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 1
        });
        harness.get_by_label("#1 s · 2 req · gpt-6-sol").click();
        wait_until(&mut harness, "session analysed", |s: &AppState| {
            s.browser.analysis.is_some()
        });
        harness.run_steps(2);
        harness.get_by_label(&line);
        harness.get_by_label(&note);
    }
}
