//! The Sessions analysis pane tells the ledger's story: its sentence (paid, lost and to what) for
//! a priced model, "price unknown" for a model whose price row nobody checked, each row's figures,
//! the what-if against the ledger, the hazards with their fixes — on the whole app
//! (egui_kittest) over a real database.

use crate::support::ui as ui_support;

use crate::support::cli::run;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::app::session_view::{MainView, row_text};
use promptwire::core::format::grouped;
use promptwire::core::ledger::summary::usd;
use promptwire::core::ledger::{self, CacheModels, Ledger, Rules};
use promptwire::core::prefix::{RequestMeta, Session};
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

/// The ledger of `bodies(model)` under `cache_models`.
fn ledger_of(model: &str, cache_models: &CacheModels) -> Ledger {
    let mut session = Session::default();
    for b in bodies(model) {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let rules = Rules {
        cache_models: cache_models.clone(),
        ..Rules::bundled()
    };
    ledger::ledger(&session, &rules)
}

/// The sentence the pane should open with: the ledger's.
fn expected(model: &str) -> String {
    ledger_of(model, &CacheModels::default()).summary.sentence()
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
    assert!(
        priced.starts_with("Input cost $0.0") && priced.contains("lost: $"),
        "{priced}"
    );
    assert_eq!(
        expected("gpt-6-luna"),
        format!(
            "{} input tokens, 0 read from the cache (0 %); price unknown for gpt-6-luna",
            grouped(
                ledger_of("gpt-6-luna", &CacheModels::default())
                    .summary
                    .totals
                    .input_tokens
            )
        )
    );
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
    let l = ledger_of("gpt-6-sol", &CacheModels::default());
    let second = &l.rows[1];
    let d = second.cost_usd.expect("priced");
    assert!(d.lost > 0.0);
    assert!(row_text(second).ends_with(&format!(
        "paid {}, ideal {}, lost {} ({} to no breakpoint)",
        usd(d.paid),
        usd(d.ideal),
        usd(d.lost),
        usd(d.lost)
    )));
    harness.get_by_label(&row_text(second));
    harness.get_by_label(&format!(
        "! stable_prefix_behind_break: {} Fix: {}",
        l.hazards[0].message, l.hazards[0].fix
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
    let tokens = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_u64).expect(p);
    let dollars = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_f64).expect(p);
    let (before_paid, after_paid) = (
        dollars(&after, "/what_if/before/cost_usd/paid"),
        dollars(&after, "/what_if/after/cost_usd/paid"),
    );
    // The what-if's "before" is the ledger's paid.
    assert_eq!(before_paid, dollars(&baseline, "/summary/cost_usd/paid"));
    let saved = dollars(&after, "/what_if/usd_saved");
    assert!(saved > 0.0, "{after}");
    let headline = format!(
        "what if breakpoint-after:0: paid {} -> {} (saves {}) · read {} -> {} tokens",
        usd(before_paid),
        usd(after_paid),
        usd(saved),
        grouped(tokens(&after, "/what_if/before/read_tokens")),
        grouped(tokens(&after, "/what_if/after/read_tokens")),
    );
    let field = |v: &Value, p: String| grouped(tokens(v, &p));
    let lines: Vec<String> = (0..2)
        .map(|i| {
            let before = |f: &str| field(&baseline, format!("/requests/{i}/predicted/{f}"));
            let after = |f: &str| field(&after, format!("/what_if/requests/{i}/{f}"));
            format!(
                "request {i}: read {} -> {} · wrote {} -> {} · uncached {} -> {} tokens",
                before("read_tokens"),
                after("read_tokens"),
                before("write_tokens"),
                after("write_tokens"),
                before("uncached_tokens"),
                after("uncached_tokens"),
            )
        })
        .collect();
    // Request 1 reads more under the edit.
    assert!(
        !lines[1].starts_with(&format!(
            "request 1: read {0} -> {0} ",
            field(&baseline, "/requests/1/predicted/read_tokens".to_string())
        )),
        "{}",
        lines[1]
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
    // The picker sits under the sentence and the waterfall: the pane shown whole.
    harness.get_by_label("Maximise Analysis").click();
    harness.run_steps(4);
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
    harness.get_by_label("Restore Analysis").click();
    harness.run_steps(2);
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
    let report = ledger::ledger(&session, &Rules::bundled());
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

/// The sentence the ledger of `bodies(model)` under `table` opens with.
fn cost_line(model: &str, table: &CacheModels) -> String {
    ledger_of(model, table).summary.sentence()
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
