//! The analysis pane tells the ledger's one story, on the whole app (egui_kittest) over the
//! seeded database at the smallest supported window, 1024×700: opening a session shows its
//! sentence — the ledger's paid and lost — and the per-request waterfall without maximising
//! anything, and a what-if starts from the ledger's paid.

use crate::support::ui as ui_support;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::app::panes::PaneId;
use promptwire::core::ledger::summary::usd;
use ui_support::{app_with, pane_rect, scratch_dir, show_sessions, state, wait_until};

#[test]
fn at_1024_by_700_the_sentence_and_the_waterfall_show_the_ledgers_figures() {
    let db = scratch_dir("ui-ledger").join("promptwire.sqlite");
    let mut harness = app_with((1024.0, 700.0), Some(db));
    show_sessions(&mut harness);
    harness
        .get_by_label("#4 cache-prefix-break · 3 req · gpt-5.5")
        .click();
    wait_until(&mut harness, "analysed", |s: &AppState| {
        s.browser.analysis.is_some()
    });
    harness.run_steps(4);
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    let summary = &analysis.ledger.summary;
    let cost = summary.totals.cost_usd.expect("gpt-5.5 is priced");
    let sentence = summary.sentence();
    // The sentence states the ledger's paid and its one loss figure.
    assert!(
        sentence.starts_with(&format!(
            "Input cost {}; {} (",
            usd(cost.paid),
            usd(cost.lost)
        )),
        "{sentence}"
    );
    assert!(
        cost.lost > 0.0,
        "the sample's instructions edit loses its history"
    );
    let pane = pane_rect(&harness, PaneId::Analysis);
    let shown = harness.get_by_label(&sentence).rect();
    assert!(
        pane.contains_rect(shown),
        "the sentence {shown:?} is inside the analysis pane {pane:?}"
    );
    let waterfall = harness
        .get_by_role_and_label(
            Role::Figure,
            &format!(
                "Input tokens per request: 3 requests, {} breaks, 0 compactions",
                summary.breaks
            ),
        )
        .rect();
    assert!(
        pane.contains_rect(waterfall) && waterfall.height() >= 48.0,
        "the waterfall {waterfall:?} is inside the analysis pane {pane:?}"
    );
    // A what-if's "before" is the ledger's paid (the picker is under the waterfall: the pane
    // maximised, as a user scrolls to it).
    harness.get_by_label("Maximise Analysis").click();
    harness.run_steps(3);
    harness.get_by_label("TTL").click();
    harness.run_steps(2);
    harness
        .get_by_role_and_label(Role::TextInput, "argument")
        .focus();
    harness.run_steps(1);
    harness
        .get_by_role_and_label(Role::TextInput, "argument")
        .type_text("12h");
    harness.run_steps(2);
    harness.get_by_label("Run what-if").click();
    wait_until(&mut harness, "what-if done", |s: &AppState| {
        s.browser.whatif.result.is_some() || s.browser.whatif.error.is_some()
    });
    let w = state(&harness)
        .browser
        .whatif
        .result
        .clone()
        .expect("a result");
    assert_eq!(w.before, summary.totals);
    harness.run_steps(2);
    let headline = promptwire::app::session_view::whatif::headline(&w);
    assert!(
        headline.starts_with(&format!("what if ttl:12h: paid {} -> ", usd(cost.paid))),
        "{headline}"
    );
    harness.get_by_label(&headline);
}
