//! The anatomy of an agent run (issue 30): what fills each request's context, by source and by
//! tool, read from the ledger's rendered view — so the parts of a request add up to its tokens
//! as the ledger counts them, and no text is tokenized a second time — with the findings that
//! save tokens ([`findings`]), the compactions and their re-warm ([`compactions`]) and the agents
//! of a run with their figures ([`agents`]). Pure: no I/O.
//!
//! Per request the work is one pass over its rendered parts (segment lookups and sums); the
//! drill-down of one request ([`parts::parts`]) is computed when it is asked for.

pub mod agents;
pub mod compactions;
pub mod findings;
pub mod parts;
mod tools;

use serde::Serialize;

use crate::core::ledger::render::Kind;
use crate::core::ledger::{Ledger, RowKind, Source};
use crate::core::prefix::Session;

pub use agents::{Agent, AgentFigures, AgentTag};
pub use compactions::Compaction;
pub use findings::Findings;
pub use parts::{Part, parts};

/// Tokens per source, in [`Source::ALL`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BySource(pub [u64; 12]);

impl BySource {
    /// Tokens of `source`.
    pub fn get(&self, source: Source) -> u64 {
        self.0[source_index(source)]
    }

    /// Adds `tokens` to `source`.
    pub fn add(&mut self, source: Source, tokens: u64) {
        self.0[source_index(source)] += tokens;
    }

    /// All sources' tokens.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(source, tokens)` in [`Source::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Source, u64)> + '_ {
        Source::ALL.iter().zip(self.0).map(|(s, t)| (*s, t))
    }
}

impl Serialize for BySource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(12))?;
        for (source, tokens) in self.iter() {
            map.serialize_entry(source.as_str(), &tokens)?;
        }
        map.end()
    }
}

/// Position of `source` in [`Source::ALL`].
pub fn source_index(source: Source) -> usize {
    match source {
        Source::Tools => 0,
        Source::Instructions => 1,
        Source::Developer => 2,
        Source::UserInstructions => 3,
        Source::Environment => 4,
        Source::User => 5,
        Source::Assistant => 6,
        Source::Reasoning => 7,
        Source::ToolCalls => 8,
        Source::ToolOutputs => 9,
        Source::Compaction => 10,
        Source::Other => 11,
    }
}

/// One tool offered by a request, and its tokens there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ToolUse {
    /// Index into [`Anatomy::tools`].
    pub tool: u32,
    /// Its definition's tokens in this request.
    pub tokens: u64,
}

/// A tool offered somewhere in the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    /// Its name as rendered (`exec_command`; a namespace's tool as `collaboration.spawn_agent`,
    /// the namespace's own line as `collaboration`).
    pub name: String,
    /// Whether the session calls it anywhere (a call in any request's input or any recorded
    /// response's output; a namespace when any of its tools is called).
    pub called: bool,
    /// Requests that offer it.
    pub offered_in: usize,
}

/// One request's anatomy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestAnatomy {
    /// Position in the session.
    pub index: usize,
    /// What it is in its conversation.
    pub kind: RowKind,
    /// Its model.
    pub model: String,
    /// Its tokens as the ledger counts them (= the sum of `by_source`).
    pub tokens: u64,
    /// Its tokens by source.
    pub by_source: BySource,
    /// How many of `tokens` (from the start of the prompt) were read from the cache: the
    /// server's `cached_tokens` in the rendered count where it reported one, else the
    /// prediction.
    pub cached: u64,
    /// The tools it offers, in prompt order.
    pub tools: Vec<ToolUse>,
}

/// The anatomy of a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anatomy {
    /// One per request, in order.
    pub requests: Vec<RequestAnatomy>,
    /// Every tool offered in the session, in order of first appearance.
    pub tools: Vec<Tool>,
    /// Every compaction.
    pub compactions: Vec<Compaction>,
    /// What would save tokens.
    pub findings: Findings,
    /// The context window of the latest request's model, when the catalog knows it.
    pub context_window: Option<u64>,
    /// The token count at which Codex compacts automatically (90 % of the window).
    pub auto_compact_tokens: Option<u64>,
}

/// What the anatomy needs besides the session and its ledger.
pub struct Context<'a> {
    /// The context window of a model slug, when known.
    pub context_window: &'a dyn Fn(&str) -> Option<u64>,
}

impl Context<'_> {
    /// No model knowledge.
    pub fn none() -> Context<'static> {
        Context {
            context_window: &|_| None,
        }
    }
}

/// Codex compacts automatically at 90 % of the context window when nothing else is configured
/// (WIRE_SPEC §7, "Effective auto-compact limit").
pub const AUTO_COMPACT_PERCENT: u64 = 90;

/// The anatomy of `session`, read from its `ledger` (computed on the same session).
pub fn anatomy(session: &Session, ledger: &Ledger, context: &Context<'_>) -> Anatomy {
    let rendered = &ledger.rendered;
    let mut catalog = tools::Catalog::default();
    let mut requests = Vec::with_capacity(ledger.rows.len());
    for row in &ledger.rows {
        let Some(layout) = rendered.layouts.get(row.index) else {
            continue;
        };
        let tools_not_recorded = layout.not_recorded.contains(&"tools");
        let anchor = layout.anchor_segment();
        let mut by_source = BySource::default();
        let mut offered = Vec::new();
        for (k, id) in layout.parts.iter().enumerate() {
            let segment = rendered.segments.get(*id);
            let source = if tools_not_recorded && Some(*id) == anchor {
                Source::Tools
            } else {
                segment.source
            };
            by_source.add(source, segment.tokens);
            if segment.kind == Kind::Tool && k < layout.sections.tools {
                let name = segment.label.as_deref().unwrap_or("");
                offered.push(ToolUse {
                    tool: catalog.id(name),
                    tokens: segment.tokens,
                });
            }
        }
        for used in &offered {
            catalog.offered(used.tool);
        }
        requests.push(RequestAnatomy {
            index: row.index,
            kind: row.kind,
            model: row.model.clone(),
            tokens: by_source.total(),
            by_source,
            cached: cached_in_rendered(row),
            tools: offered,
        });
    }
    catalog.mark_called(session, rendered);
    let tools = catalog.into_tools();
    let compactions = compactions::find(ledger);
    let window = requests
        .last()
        .and_then(|r| (context.context_window)(&r.model));
    let auto = window.map(|w| w * AUTO_COMPACT_PERCENT / 100);
    let findings = findings::find(ledger, &requests, &tools, window, auto);
    Anatomy {
        requests,
        tools,
        compactions,
        findings,
        context_window: window,
        auto_compact_tokens: auto,
    }
}

/// [`anatomy`] with the context windows of `catalog` (a slug the catalog does not know has none).
pub fn with_catalog(
    session: &Session,
    ledger: &Ledger,
    catalog: &crate::core::models::ModelCatalog,
) -> Anatomy {
    let window = |model: &str| {
        let info = catalog.lookup(model);
        (!info.is_fallback())
            .then_some(info.context_window.or(info.max_context_window))
            .flatten()
    };
    anatomy(
        session,
        ledger,
        &Context {
            context_window: &window,
        },
    )
}

/// The row's read tokens in the rendered count (the server's `cached_tokens` scaled from its
/// `input_tokens` to the estimate).
fn cached_in_rendered(row: &crate::core::ledger::Row) -> u64 {
    let read = row.read_tokens();
    let input = row.input_tokens();
    if input == 0 || input == row.tokens {
        return read.min(row.tokens);
    }
    ((read as f64 * row.tokens as f64 / input as f64).round() as u64).min(row.tokens)
}

/// The effort a request asked for, read from its rendered settings (`Reasoning: high`).
pub fn effort_of(ledger: &Ledger, index: usize) -> Option<String> {
    let rendered = &ledger.rendered;
    let layout = rendered.layouts.get(index)?;
    layout.parts[..layout.sections.settings.min(layout.parts.len())]
        .iter()
        .map(|id| rendered.segments.get(*id))
        .find(|s| s.kind == Kind::Setting(crate::core::ledger::render::Setting::Effort))
        .and_then(|s| s.text())
        .map(|t| t.trim().trim_start_matches("Reasoning:").trim().to_string())
}
