//! `promptwire render (BODY.json… | --session ID [--db PATH]) [--json]`: the prompt as the
//! server renders it (WIRE_SPEC §19.2, `core::ledger::render`) — for each request, its segments
//! in prompt order with their source, kind, JSON pointer and tokens (and, with `--json`, each
//! segment's content hash and whether it ends a user message or a tool output: where the
//! implicit cache breakpoint goes). What the ledger compares and counts, shown whole; the
//! caching stand-in (`tools/standin_upstream.py --cache`) reads it to keep its cache on the same
//! segments.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use serde_json::json;

use super::input::{display_name, parse_json, read_text};
use crate::core::format::grouped;
use crate::core::ledger::render::{self, pointer};
use crate::core::ledger::sim::{TOOL, USER, class_of};
use crate::core::ledger::{Counting, Rendered};
use crate::core::prefix::{RequestMeta, Session};
use crate::store::prefix_input::push_stored_session;

/// Arguments of `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Request bodies in the order they were sent (`-` reads one from standard input).
    #[arg(
        value_name = "BODY.json",
        required_unless_present = "session",
        conflicts_with = "session"
    )]
    bodies: Vec<String>,
    /// Render a stored session instead of body files.
    #[arg(long, value_name = "ID")]
    session: Option<i64>,
    /// Database file for --session (default: the embedded database).
    #[arg(long, value_name = "PATH", requires = "session")]
    db: Option<PathBuf>,
    /// One JSON line per request.
    #[arg(long)]
    json: bool,
    /// Largest accepted file, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
}

/// Runs `render`.
pub fn run(args: &RenderArgs) -> anyhow::Result<()> {
    let mut session = Session::default();
    match args.session {
        Some(id) => {
            let store = super::replay::open_existing(args.db.as_deref())?;
            push_stored_session(&mut session, &store, id)?;
        }
        None => {
            if args.bodies.iter().filter(|b| *b == "-").count() > 1 {
                bail!("standard input (`-`) can be read only once");
            }
            for arg in &args.bodies {
                let text = read_text(arg, args.max_bytes)?;
                let body = parse_json(arg, &text)?;
                drop(text);
                session
                    .push_body_owned(body, RequestMeta::default())
                    .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(arg)))?;
            }
        }
    }
    let rendered = render::render(&session, &Counting::default());
    let mut out = std::io::stdout().lock();
    for (i, layout) in rendered.layouts.iter().enumerate() {
        if args.json {
            let segments: Vec<_> = (0..layout.len())
                .map(|k| segment_json(&rendered, i, k))
                .collect();
            let line = json!({"request": i, "tokens": layout.total(), "segments": segments});
            serde_json::to_writer(&mut out, &line)?;
            writeln!(out)?;
        } else {
            writeln!(
                out,
                "request {i}: {} tokens in {} segments",
                grouped(layout.total()),
                layout.len()
            )?;
            for k in 0..layout.len() {
                let s = rendered.segments.get(layout.parts[k]);
                let label = s.label.as_deref().unwrap_or("").trim_end_matches('*');
                let line = format!(
                    "  {:>8}  {:<17} {:<12} {} {label}",
                    grouped(s.tokens),
                    s.source.as_str(),
                    s.kind.as_str(),
                    pointer(layout, &rendered.segments, k),
                );
                writeln!(out, "{}", super::shown::shown(line.trim_end()))?;
            }
        }
    }
    Ok(())
}

/// One segment of request `i` (part `k`) as JSON.
fn segment_json(rendered: &Rendered, i: usize, k: usize) -> serde_json::Value {
    let layout = &rendered.layouts[i];
    let s = rendered.segments.get(layout.parts[k]);
    let class = class_of(s);
    json!({
        "key": format!("{:032x}", s.hash),
        "tokens": s.tokens,
        "source": s.source.as_str(),
        "kind": s.kind.as_str(),
        "label": s.label.as_deref().map(|l| l.trim_end_matches('*')),
        "pointer": pointer(layout, &rendered.segments, k),
        "ends": if class & USER != 0 { Some("user") } else if class & TOOL != 0 { Some("tool") } else { None },
        "explicit_breakpoint": layout.explicit.contains(&(k as u32)),
        "item": layout.item_of(k),
    })
}
