//! The structural diff on the whole app: the Lite column shows placeholders where it lacks what
//! the standard column has (top-level `tools`), every column kind is compared (headers too),
//! the notes scroll to their lines (a headers column lists the header notes), the Lite notes of
//! hello.json say every change and nothing untrue, and "Next difference" steps through them.

use crate::support::ui as ui_support;

use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppCommand;
use promptwire::app::settings::{Column, ColumnDialect, ViewKind};
use promptwire::core::json_diff::Mark;
use ui_support::{app, state, wait_for_compile};

#[test]
fn the_lite_column_shows_the_removed_tools_as_placeholders() {
    let mut harness = app();
    let (standard, lite) = {
        let s = state(&harness);
        (s.views[0].clone(), s.views[1].clone())
    };
    let grid = &standard.aligned;
    let first = grid.row_of_path(0, "tools").expect("standard has tools");
    let last = (first..grid.row_count())
        .find(|&r| grid.columns[0].text[r].as_deref() == Some("  ],"))
        .expect("end of tools");
    let tool_rows = first..=last;
    // Standard: the tools as text; Lite: a placeholder row for each, marked removed.
    let lite_cells: Vec<(Option<&str>, Mark)> = tool_rows
        .clone()
        .map(|r| (lite.rows().text[r].as_deref(), lite.rows().marks[r]))
        .collect();
    assert_eq!(lite_cells, vec![(None, Mark::Removed); tool_rows.count()]);
    // Lite adds its prefix: the additional_tools item is marked added.
    let added = grid.row_of_path(1, "input[0]").expect("lite input[0]");
    assert_eq!(lite.rows().text[added].as_deref(), Some("    {"));
    assert_eq!(lite.rows().marks[added], Mark::Added);
    assert_eq!(standard.rows().text[added], None);

    // The note explaining it takes the user to those lines.
    let headers: Vec<_> = harness
        .get_all_by_label_contains("Why fields differ")
        .collect();
    assert_eq!(headers.len(), 2);
    headers[1].click();
    harness.run_steps(3);
    harness
        .get_by_label(
            "tools: left out: a Lite request has no top-level `tools`; they travel in input[0]",
        )
        .click();
    harness.run_steps(4);
    // (A run taller than the view also says how many rows it has.)
    let screen = harness.ctx.content_rect();
    assert!(
        harness
            .query_all_by_label_contains("− not in this column")
            .any(|node| screen.contains_rect(node.rect()))
    );
}

#[test]
fn headers_columns_are_compared_too_and_next_difference_steps_through() {
    let mut harness = app();
    let columns = [ColumnDialect::Standard, ColumnDialect::Lite].map(|dialect| Column {
        dialect,
        provider: None,
        view: ViewKind::Headers,
    });
    harness
        .state()
        .sender()
        .send(AppCommand::SetColumns(columns.to_vec()));
    harness.run_steps(2);
    wait_for_compile(&mut harness);
    let lite = state(&harness).views[1].clone();
    let row = lite
        .aligned
        .row_of_path(1, "x-openai-internal-codex-responses-lite")
        .expect("lite header row");
    assert_eq!(
        lite.rows().text[row].as_deref(),
        Some("  \"x-openai-internal-codex-responses-lite\": \"true\",")
    );
    assert_eq!(lite.rows().marks[row], Mark::Added);
    let count = lite.aligned.differences.len();
    assert!(count > 0);
    harness.get_by_label(&format!("{count} differences between the columns"));
    harness.get_by_label("Next difference").click();
    harness.run_steps(3);
    harness.get_by_label(&format!("Difference 1 of {count}"));
    assert_eq!(harness.state().ui_state().columns.difference, Some(0));
}

#[test]
fn the_columns_scroll_together() {
    let mut harness = app();
    let model_row = "  \"model\": \"gpt-5.5\",";
    assert_eq!(harness.query_all_by_label(model_row).count(), 2);
    // Scroll the left column only (the pointer over its text).
    let left = harness
        .get_all_by_label(model_row)
        .next()
        .expect("row")
        .rect();
    harness.hover_at(left.center());
    for _ in 0..5 {
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -200.0),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        harness.run_steps(2);
    }
    harness.run_steps(4);
    assert!(harness.state().ui_state().columns.offset_y > 100.0);
    // Both columns left their top rows behind.
    assert_eq!(harness.query_all_by_label(model_row).count(), 0);
}

#[test]
fn hello_json_under_lite_explains_every_change_and_the_headers_column_its_header() {
    let mut harness = app();
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    wait_for_compile(&mut harness);
    let lite = state(&harness).views[1].clone();
    assert_eq!(lite.label, "Lite · OpenAI · HTTP body");
    let notes: Vec<(&str, &str)> = lite
        .compiled
        .notes
        .iter()
        .map(|n| (n.path.as_str(), n.message.as_str()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "tools",
                "left out: a Lite request has no top-level `tools` (a standard request sends `tools: []`)"
            ),
            (
                "input[0]",
                "added: an `additional_tools` developer item with an empty list (no tools to offer)"
            ),
            (
                "input[1]",
                "moved: the base instructions' developer message comes after the tools item (a standard request has it at input[0])"
            ),
            (
                "input[2]",
                "moved: the prompt's items start here, after the 2 added item(s)"
            ),
            (
                "reasoning.context",
                "added: all_turns — Lite always asks the model to keep its reasoning across turns"
            ),
            (
                "parallel_tool_calls",
                "false: Lite requests never ask for parallel tool calls"
            ),
            (
                "headers.x-openai-internal-codex-responses-lite",
                "added: tells the server this is a Responses Lite request (a standard request has no such header)"
            ),
        ]
    );
    // The body column lists the body's notes, not the header's.
    harness.get_by_label("Why fields differ (6)").click();
    harness.run_steps(3);
    harness.get_by_label(
        "tools: left out: a Lite request has no top-level `tools` (a standard request sends `tools: []`)",
    );

    // A headers column lists the header's note, by the header's row, and it can be clicked.
    let columns = [ColumnDialect::Standard, ColumnDialect::Lite].map(|dialect| Column {
        dialect,
        provider: None,
        view: ViewKind::Headers,
    });
    harness
        .state()
        .sender()
        .send(AppCommand::SetColumns(columns.to_vec()));
    harness.run_steps(2);
    wait_for_compile(&mut harness);
    // (The notes of column 1 are still open from above: one note now.)
    harness.get_by_label("Why fields differ (1)");
    let note = "x-openai-internal-codex-responses-lite: added: tells the server this is a Responses Lite request (a standard request has no such header)";
    harness.get_by_label(note);
    // Its path is a row of this column's grid, so clicking it shows that row.
    let headers = state(&harness).views[1].clone();
    assert_eq!(headers.label, "Lite · OpenAI · Headers");
    let row = headers
        .aligned
        .row_of_path(1, "x-openai-internal-codex-responses-lite")
        .expect("the header's row");
    assert_eq!(
        headers.rows().text[row].as_deref(),
        Some("  \"x-openai-internal-codex-responses-lite\": \"true\",")
    );
}

#[test]
fn next_difference_stays_under_the_pointer_while_it_steps() {
    let mut harness = app();
    let count = state(&harness).views[0].aligned.differences.len();
    assert!(count >= 3, "{count} differences");
    let before = harness.get_by_label("Next difference").rect();
    harness.get_by_label("Next difference").click();
    harness.run_steps(3);
    let after_one = harness.get_by_label("Next difference").rect();
    harness.get_by_label("Next difference").click();
    harness.run_steps(3);
    assert_eq!(
        (after_one, harness.get_by_label("Next difference").rect()),
        (before, before),
        "the button did not move"
    );
    assert_eq!(harness.state().ui_state().columns.difference, Some(1));
    harness.get_by_label(&format!("Difference 2 of {count}"));
}

#[test]
fn a_column_added_from_the_columns_menu_comes_into_view_at_1024_by_700() {
    let mut harness = ui_support::app_with((1024.0, 700.0), None);
    let mut columns = state(&harness).settings.columns.clone();
    columns.push(Column {
        dialect: ColumnDialect::Standard,
        provider: None,
        view: ViewKind::Headers,
    });
    // As the menu does: the columns, and which one was added.
    harness.get_by_label("Columns").click();
    harness.run();
    harness.get_by_label("standard").click();
    harness.run();
    harness.get_by_label("the prompt's provider").click();
    harness.run();
    harness.get_by_label(ViewKind::Headers.label()).click();
    harness.run_steps(2);
    wait_for_compile(&mut harness);
    harness.run_steps(4);
    assert_eq!(state(&harness).settings.columns, columns);
    let label = state(&harness).views[2].label.clone();
    assert!(
        ui_support::fully_visible(&harness, &label),
        "the new column {label} is in view"
    );
}
