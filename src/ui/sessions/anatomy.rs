//! The Anatomy tab of the Sessions view: what fills the context, request by request — the
//! chart of tokens by source ([`anatomy_chart`]), the selected request's breakdown (sources as
//! bars, each opening onto its items; a click on an item shows it in the inspector's body), the
//! findings that save tokens (tools never called, the largest tool outputs, what grew fastest,
//! the turns left), the compactions with their cost and re-warm, and the agents of the run.
//! Everything is read from the open session's ledger and anatomy (computed on the worker with
//! the ledger); the breakdown of one request is computed when it is selected and kept.

use std::sync::Arc;

use egui::{RichText, Sense, Ui, vec2};

use super::anatomy_chart::{self, ChartCache, Marks, colour, swatch};
use super::{SessionsUi, send};
use crate::app::session_view::{Analysis, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::core::anatomy::{self, Anatomy, Part};
use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{RowKind, Source};

/// Items listed under an opened source (the largest first); the rest are counted.
const ITEMS_SHOWN: usize = 200;

/// The tab's widget state.
#[derive(Debug, Default)]
pub struct AnatomyUi {
    /// The chart's kept mesh.
    pub chart: ChartCache,
    /// The breakdown of one request, kept: (anatomy, request) it was computed for, its parts.
    parts: Option<(usize, usize, Arc<Vec<Part>>)>,
    /// Sources opened in the breakdown.
    pub open: Vec<Source>,
    /// The request hovered in the chart last frame.
    pub hovered: Option<usize>,
}

/// Where the inspector should show a part: the request row and the part's JSON pointer in the
/// whole prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reveal {
    /// The request (row index).
    pub request: usize,
    /// The pointer.
    pub pointer: String,
}

/// Draws the tab.
pub fn anatomy_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let browser = &state.browser;
    let Some(analysis) = &browser.analysis else {
        if browser.analyzing {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing the session's ledger and anatomy on a worker…");
            });
        } else if state.sessions.open.is_some() {
            ui.weak("No analysis.");
        }
        return;
    };
    let anatomy = &analysis.anatomy;
    if anatomy.requests.is_empty() {
        ui.weak("The session has no request.");
        return;
    }
    let selected = browser
        .selected
        .filter(|i| *i < anatomy.requests.len())
        .unwrap_or(anatomy.requests.len() - 1);
    let visible = ui.available_height();
    egui::ScrollArea::vertical()
        .id_salt("anatomy_scroll")
        .auto_shrink(false)
        .show(ui, |ui| {
            ui.add(egui::Label::new(RichText::new(headline(anatomy, selected)).strong()).wrap());
            anatomy_chart::legend_ui(ui, anatomy);
            let marks = marks(analysis);
            // Half the pane: the breakdown's first rows stay in view under it.
            let height = (visible * 0.5).clamp(90.0, 260.0);
            let chart = anatomy_chart::chart_ui(
                ui,
                anatomy,
                &marks,
                Some(selected),
                &mut sui.anatomy.chart,
                height,
            );
            sui.anatomy.hovered = chart.hovered;
            if let Some(i) = chart.clicked {
                sui.scroll_to_selected = true;
                send(tx, SessionCommand::Select(i));
            }
            breakdown_ui(ui, analysis, selected, sui, tx);
            findings_ui(ui, analysis, sui, tx);
            compactions_ui(ui, analysis, sui, tx);
            agents_ui(ui, analysis, state, tx);
        });
}

/// The sentence over the chart: the selected request's tokens and its largest sources.
fn headline(anatomy: &Anatomy, selected: usize) -> String {
    let r = &anatomy.requests[selected];
    let mut top: Vec<(Source, u64)> = r.by_source.iter().filter(|(_, t)| *t > 0).collect();
    top.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
    let parts: Vec<String> = top
        .iter()
        .take(3)
        .map(|(s, t)| {
            format!(
                "{} {:.0} %",
                s.label(),
                *t as f64 * 100.0 / r.tokens.max(1) as f64
            )
        })
        .collect();
    format!(
        "Request {}: {} tokens, {} read from the cache — {}",
        r.index,
        grouped(r.tokens),
        grouped(r.cached),
        parts.join(", ")
    )
}

/// The chart's marks from the ledger's rows.
fn marks(analysis: &Analysis) -> Marks {
    let rows = &analysis.ledger.rows;
    Marks {
        compactions: rows
            .iter()
            .filter(|r| r.kind == RowKind::Compaction)
            .map(|r| r.index)
            .collect(),
        breaks: rows
            .iter()
            .filter(|r| r.is_break())
            .map(|r| r.index)
            .collect(),
    }
}

/// Selects request `request` and shows `pointer` in the inspector's body.
fn reveal(sui: &mut SessionsUi, tx: &CommandSender, request: usize, pointer: String) {
    sui.scroll_to_selected = true;
    sui.inspector.reveal = Some(Reveal { request, pointer });
    send(tx, SessionCommand::Select(request));
}

/// The selected request's sources as bars, each opening onto its items.
fn breakdown_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    selected: usize,
    sui: &mut SessionsUi,
    tx: &CommandSender,
) {
    let anatomy = &analysis.anatomy;
    let r = &anatomy.requests[selected];
    let key = Arc::as_ptr(anatomy) as usize;
    let parts = match &sui.anatomy.parts {
        Some((k, i, parts)) if *k == key && *i == selected => parts.clone(),
        _ => {
            let parts = Arc::new(anatomy::parts(&analysis.ledger, r));
            sui.anatomy.parts = Some((key, selected, parts.clone()));
            parts
        }
    };
    ui.add_space(4.0);
    ui.label(RichText::new(format!("Request {} by source", r.index)).strong())
        .on_hover_text(
            "Click a source to list its items; click an item to show it in the inspector.",
        );
    let mut sources: Vec<(Source, u64)> = r.by_source.iter().filter(|(_, t)| *t > 0).collect();
    sources.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
    let total = r.tokens.max(1) as f32;
    let bar_width = (ui.available_width() - 260.0).clamp(60.0, 320.0);
    for (source, tokens) in sources {
        let cached: u64 = parts
            .iter()
            .filter(|p| p.source == source)
            .map(|p| p.cached_tokens)
            .sum();
        let open = sui.anatomy.open.contains(&source);
        let row = ui.horizontal(|ui| {
            let (_, icon_response) = ui.allocate_exact_size(vec2(12.0, 12.0), Sense::hover());
            egui::collapsing_header::paint_default_icon(
                ui,
                if open { 1.0 } else { 0.0 },
                &icon_response,
            );
            swatch(ui, colour(source));
            ui.add_sized(
                vec2(110.0, 14.0),
                egui::Label::new(source.label()).truncate(),
            );
            let (rect, _) = ui.allocate_exact_size(vec2(bar_width, 12.0), Sense::hover());
            let painter = ui.painter();
            painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
            let full = rect.width() * tokens as f32 / total;
            let read = rect.width() * cached as f32 / total;
            let c = colour(source);
            painter.rect_filled(
                egui::Rect::from_min_size(rect.min, vec2(full, rect.height())),
                2.0,
                c.gamma_multiply(0.38),
            );
            painter.rect_filled(
                egui::Rect::from_min_size(rect.min, vec2(read, rect.height())),
                2.0,
                c,
            );
            ui.monospace(format!(
                "{:>9} {:>5.1} %",
                grouped(tokens),
                tokens as f32 * 100.0 / total
            ));
        });
        let response = row.response.interact(Sense::click()).on_hover_text(format!(
            "{}: {} tokens, {:.1} % of the request; {} read from the cache",
            source.label(),
            grouped(tokens),
            tokens as f32 * 100.0 / total,
            grouped(cached)
        ));
        response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Button,
                true,
                format!("source {} {}", source.label(), grouped(tokens)),
            )
        });
        if response.clicked() {
            if open {
                sui.anatomy.open.retain(|s| *s != source);
            } else {
                sui.anatomy.open.push(source);
            }
        }
        if open {
            items_ui(ui, &parts, source, r.tokens, r.index, sui, tx);
        }
    }
}

/// The items of `source` in one request.
fn items_ui(
    ui: &mut Ui,
    parts: &[Part],
    source: Source,
    request_tokens: u64,
    request: usize,
    sui: &mut SessionsUi,
    tx: &CommandSender,
) {
    let mine: Vec<&Part> = parts.iter().filter(|p| p.source == source).collect();
    ui.indent(("anatomy_items", source.as_str()), |ui| {
        for p in mine.iter().take(ITEMS_SHOWN) {
            let read = if p.tokens > 0 && p.cached_tokens == p.tokens {
                "cached"
            } else if p.cached_tokens > 0 {
                "partly cached"
            } else {
                "not cached"
            };
            let name = match (p.label.is_empty(), p.item) {
                (false, _) => p.label.clone(),
                (true, Some(i)) => format!("item {i}"),
                (true, None) => p.pointer.clone(),
            };
            let text = format!(
                "{:>8}  {:>5.1} %  {:<13} {name}  {}",
                grouped(p.tokens),
                p.tokens as f64 * 100.0 / request_tokens.max(1) as f64,
                read,
                p.preview
            );
            let response = ui
                .add(
                    egui::Label::new(RichText::new(text).monospace().small())
                        .truncate()
                        .sense(Sense::click()),
                )
                .on_hover_text(format!(
                    "{} — click to show it in the inspector",
                    if p.pointer.is_empty() {
                        "(not in the body)"
                    } else {
                        &p.pointer
                    }
                ));
            let pointer = p.pointer.clone();
            response.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::Button, true, format!("part {pointer}"))
            });
            if response.clicked() && !p.pointer.is_empty() {
                reveal(sui, tx, request, p.pointer.clone());
            }
        }
        if mine.len() > ITEMS_SHOWN {
            ui.weak(format!("… and {} smaller items", mine.len() - ITEMS_SHOWN));
        }
    });
}

/// The findings that save tokens.
fn findings_ui(ui: &mut Ui, analysis: &Analysis, sui: &mut SessionsUi, tx: &CommandSender) {
    let anatomy = &analysis.anatomy;
    let f = &anatomy.findings;
    let last = anatomy.requests.len().saturating_sub(1);
    egui::CollapsingHeader::new(RichText::new("Findings").strong())
        .id_salt("anatomy_findings")
        .default_open(true)
        .show(ui, |ui| {
            if let Some(h) = &f.headroom {
                let turns = |t: Option<u64>, what: &str, limit: Option<u64>| match (t, limit) {
                    (Some(t), Some(l)) => format!("{} turns to {what} ({})", grouped(t), grouped(l)),
                    _ => format!("{what}: not known for this model"),
                };
                ui.add(
                    egui::Label::new(format!(
                        "At {:+.0} tokens a turn: {}; {}.",
                        h.growth_per_turn,
                        turns(
                            h.turns_to_auto_compact,
                            "auto-compaction",
                            anatomy.auto_compact_tokens
                        ),
                        turns(h.turns_to_window, "the context window", anatomy.context_window)
                    ))
                    .wrap(),
                );
            }
            if let Some(g) = f.growth.first() {
                let rest: Vec<String> = f
                    .growth
                    .iter()
                    .skip(1)
                    .take(2)
                    .map(|g| format!("{} {:+.0}", g.source.label(), g.per_turn))
                    .collect();
                ui.add(
                    egui::Label::new(format!(
                        "Grew fastest: {} from {} to {} tokens ({:+.0} a turn){}",
                        g.source.label(),
                        grouped(g.from),
                        grouped(g.to),
                        g.per_turn,
                        if rest.is_empty() {
                            String::new()
                        } else {
                            format!("; then {}", rest.join(", "))
                        }
                    ))
                    .wrap(),
                );
            }
            if anatomy.tools.is_empty() {
                ui.weak(
                    "The recording does not list the tools (a rollout records none): unused tools cannot be told.",
                );
            } else if f.unused_tools.is_empty() {
                ui.weak("Every tool offered in every request is called at least once.");
            } else {
                let total: u64 = f.unused_tools.iter().map(|t| t.tokens_total).sum();
                ui.label(format!(
                    "{} tools offered in every request and never called — {} tokens over the session:",
                    f.unused_tools.len(),
                    grouped(total)
                ));
                for t in &f.unused_tools {
                    let text = format!(
                        "  {} — {} tokens a request, {} in all{}",
                        t.name,
                        grouped(t.tokens_per_request),
                        grouped(t.tokens_total),
                        t.usd_total.map_or(String::new(), |u| format!(" ({})", usd(u)))
                    );
                    if ui
                        .add(egui::Label::new(text).truncate().sense(Sense::click()))
                        .on_hover_text("Click to show its definition in the inspector")
                        .clicked()
                        && let Some(pointer) = tool_pointer(analysis, last, &t.name)
                    {
                        reveal(sui, tx, last, pointer);
                    }
                }
            }
            if !f.largest_outputs.is_empty() {
                ui.label("Largest tool outputs:");
                for o in &f.largest_outputs {
                    let text = format!(
                        "  {} tokens — {} at request {} (carried by {} requests)",
                        grouped(o.tokens),
                        o.tool,
                        o.request,
                        grouped(o.carried_by as u64)
                    );
                    if ui
                        .add(egui::Label::new(text).truncate().sense(Sense::click()))
                        .on_hover_text(format!("{} — click to show it in the inspector", o.pointer))
                        .clicked()
                    {
                        reveal(sui, tx, o.request, o.pointer.clone());
                    }
                }
            }
        });
}

/// The pointer of tool `name`'s definition in request `request`.
fn tool_pointer(analysis: &Analysis, request: usize, name: &str) -> Option<String> {
    let r = analysis.anatomy.requests.get(request)?;
    anatomy::parts(&analysis.ledger, r)
        .into_iter()
        .find(|p| p.source == Source::Tools && p.label == name)
        .map(|p| p.pointer)
}

/// The compactions.
fn compactions_ui(ui: &mut Ui, analysis: &Analysis, sui: &mut SessionsUi, tx: &CommandSender) {
    let compactions = &analysis.anatomy.compactions;
    let loops = compactions.iter().filter(|c| c.in_loop).count();
    let title = match (compactions.len(), loops) {
        (0, _) => "Compactions: none".to_string(),
        (n, 0) => format!("Compactions ({n})"),
        (n, l) => format!("Compactions ({n}, {l} in a loop)"),
    };
    egui::CollapsingHeader::new(RichText::new(title).strong())
        .id_salt("anatomy_compactions")
        .default_open(!compactions.is_empty())
        .show(ui, |ui| {
            if compactions.is_empty() {
                ui.weak("The session was never compacted.");
            }
            for c in compactions {
                let text = format!(
                    "request {}{}: {} tokens before, {} after{}{} · re-warm {} tokens over {} request(s){}{}",
                    c.index,
                    if c.recorded { "" } else { " (compaction not recorded)" },
                    grouped(c.tokens_before),
                    c.tokens_after.map_or("?".to_string(), grouped),
                    c.cost_usd.map_or(String::new(), |u| format!(" · cost {}", usd(u))),
                    c.read_tokens
                        .map_or(String::new(), |r| format!(", read {}", grouped(r))),
                    grouped(c.rewarm_tokens),
                    c.rewarm_requests,
                    c.rewarm_usd.map_or(String::new(), |u| format!(" ({})", usd(u))),
                    if c.in_loop { " — in a compaction loop" } else { "" }
                );
                let label = if c.in_loop {
                    RichText::new(text).color(ui.visuals().warn_fg_color)
                } else {
                    RichText::new(text)
                };
                if ui
                    .add(egui::Label::new(label).wrap().sense(Sense::click()))
                    .on_hover_text("Click to select the request")
                    .clicked()
                {
                    sui.scroll_to_selected = true;
                    send(tx, SessionCommand::Select(c.index));
                }
            }
        });
}

/// The agents of the run (and, for a subagent's session, the session that spawned it).
fn agents_ui(ui: &mut Ui, analysis: &Analysis, state: &AppState, tx: &CommandSender) {
    let agents = &analysis.agents;
    let open = state
        .sessions
        .sessions
        .iter()
        .find(|s| Some(s.id) == state.sessions.open);
    if let Some((parent, agent)) = open.and_then(|s| Some((s.parent_session?, s.agent.as_ref()?))) {
        let text = format!(
            "Spawned by session #{parent} ({}) — open it",
            agent.kind.as_deref().unwrap_or("subagent"),
        );
        let hover = format!(
            "this thread {}, spawned by thread {}",
            agent.thread,
            agent.parent.as_deref().unwrap_or("?")
        );
        if ui.link(text).on_hover_text(hover).clicked() {
            send(tx, SessionCommand::Open(parent));
        }
    }
    egui::CollapsingHeader::new(RichText::new(format!("Agents ({})", agents.len())).strong())
        .id_salt("anatomy_agents")
        .default_open(agents.len() > 1)
        .show(ui, |ui| {
            for a in agents {
                let kind = a.tag.kind.as_deref().unwrap_or("root");
                let mut text = format!(
                    "{}{}{} · {}{} · {}",
                    "      ".repeat(a.depth),
                    if a.depth > 0 { "subagent: " } else { "" },
                    kind,
                    a.model.as_deref().unwrap_or("?"),
                    a.effort
                        .as_deref()
                        .map_or(String::new(), |e| format!(" {e}")),
                    a.figures_text(),
                );
                if let Some(subtree) = a.subtree_text() {
                    text.push_str(&format!(" — {subtree}"));
                }
                let open_other = a.session.filter(|s| Some(*s) != state.sessions.open);
                let response = ui
                    .add(egui::Label::new(text).truncate().sense(Sense::click()))
                    .on_hover_text(format!(
                        "thread {}{}",
                        a.tag.thread,
                        if open_other.is_some() {
                            " — click to open its session"
                        } else {
                            ""
                        }
                    ));
                if response.clicked()
                    && let Some(id) = open_other
                {
                    send(tx, SessionCommand::Open(id));
                }
            }
        });
}
