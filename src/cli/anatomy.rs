//! `promptwire anatomy (BODY.json… | --session ID [--db PATH]) [--request N] [--json]`: what
//! fills each request's context (`core::anatomy`), read from the session's ledger — its tokens
//! by source and by tool, the tools never called, the largest tool outputs, the growth and the
//! turns left, every compaction with its cost and re-warm, and the agents of the run (a stored
//! session's subagents, or the threads the bodies' `client_metadata` names) with their figures.
//! `--request N` prints one request's breakdown, part by part. The app's Sessions tab shows the
//! same anatomy as a chart.
//!
//! JSON (one object): `requests: [{index, tokens, by_source: {source: tokens}, tools: [{name,
//! tokens, called}], cached}]`, `tools_unused`, `compactions: [{index, tokens_before,
//! tokens_after, cost_usd, …}]`, `agents: [{thread, parent, kind, requests, tokens, cost_usd,
//! …}]`, `findings`, and with `--request N` its `parts`.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use serde_json::{Value, json};

use super::input::{display_name, parse_json, read_text};
use crate::core::anatomy::agents::{AgentNode, tree};
use crate::core::anatomy::{self, Agent, AgentTag, Anatomy, RequestAnatomy};
use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{self, Ledger, Rules};
use crate::core::models::ModelCatalog;
use crate::core::prefix::{RequestMeta, Session};
use crate::store::agents::stored_agents;
use crate::store::prefix_input::push_stored_session;

/// Arguments of `anatomy`.
#[derive(Debug, Args)]
pub struct AnatomyArgs {
    /// Request bodies in the order they were sent (`-` reads one from standard input).
    #[arg(
        value_name = "BODY.json",
        required_unless_present = "session",
        conflicts_with = "session"
    )]
    bodies: Vec<String>,
    /// A stored session instead of body files.
    #[arg(long, value_name = "ID")]
    session: Option<i64>,
    /// Database file for --session (default: the embedded database).
    #[arg(long, value_name = "PATH", requires = "session")]
    db: Option<PathBuf>,
    /// One request's breakdown, part by part (0-based position).
    #[arg(long, value_name = "N")]
    request: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Largest accepted file, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
}

/// Runs `anatomy`.
pub fn run(args: &AnatomyArgs) -> anyhow::Result<()> {
    let rules = Rules::bundled();
    let mut session = Session::default();
    let mut tags: Vec<Option<AgentTag>> = Vec::new();
    let stored = match args.session {
        Some(id) => {
            let store = super::replay::open_existing(args.db.as_deref())?;
            push_stored_session(&mut session, &store, id)?;
            Some((store, id))
        }
        None => {
            load_bodies(&mut session, &mut tags, args)?;
            None
        }
    };
    if let Some(n) = args.request
        && n >= session.len()
    {
        bail!(
            "--request {n}: the session has {} request(s) (0 to {})",
            session.len(),
            session.len().saturating_sub(1)
        );
    }
    let ledger = ledger::ledger(&session, &rules);
    let anatomy = anatomy::with_catalog(&session, &ledger, &ModelCatalog::bundled());
    // A stored session's agents are it and its subagents' sessions; body files are one
    // recording whose requests name their threads.
    let agents = match &stored {
        Some((store, id)) => stored_agents(store, *id, &rules, &ledger)?,
        None => agents_of(&ledger, &tags),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut value = anatomy_json(&anatomy, &agents);
        if let Some(n) = args.request {
            value["parts"] = json!(anatomy::parts(&ledger, &anatomy.requests[n]));
        }
        serde_json::to_writer(&mut out, &value)?;
        writeln!(out)?;
        return Ok(());
    }
    match args.request {
        Some(n) => write_parts(&mut out, &ledger, &anatomy.requests[n])?,
        None => write_text(&mut out, &anatomy, &agents)?,
    }
    Ok(())
}

/// Pushes the body files, noting each body's agent tag.
fn load_bodies(
    session: &mut Session,
    tags: &mut Vec<Option<AgentTag>>,
    args: &AnatomyArgs,
) -> anyhow::Result<()> {
    if args.bodies.iter().filter(|b| *b == "-").count() > 1 {
        bail!("standard input (`-`) can be read only once");
    }
    for arg in &args.bodies {
        let text = read_text(arg, args.max_bytes)?;
        let body = parse_json(arg, &text)?;
        drop(text);
        tags.push(AgentTag::from_body(&body));
        session
            .push_body_owned(body, RequestMeta::default())
            .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(arg)))?;
    }
    Ok(())
}

/// The agents of the session: one per thread the requests name (all of them one agent when
/// none names a thread).
fn agents_of(ledger: &Ledger, tags: &[Option<AgentTag>]) -> Vec<Agent> {
    let mut threads: Vec<(AgentTag, Vec<usize>)> = Vec::new();
    for (i, tag) in tags.iter().enumerate() {
        let Some(tag) = tag else { continue };
        match threads.iter_mut().find(|(t, _)| t.thread == tag.thread) {
            Some((_, rows)) => rows.push(i),
            None => threads.push((tag.clone(), vec![i])),
        }
    }
    if threads.is_empty() {
        let tag = AgentTag {
            thread: "bodies".to_string(),
            ..AgentTag::default()
        };
        return tree(vec![AgentNode::of_ledger(tag, None, ledger)]);
    }
    // Requests without a tag belong to the first thread.
    let untagged: Vec<usize> = (0..ledger.rows.len())
        .filter(|i| tags.get(*i).is_none_or(Option::is_none))
        .collect();
    threads[0].1.extend(untagged);
    threads[0].1.sort_unstable();
    tree(
        threads
            .into_iter()
            .map(|(tag, rows)| AgentNode::of_rows(tag, None, ledger, &rows))
            .collect(),
    )
}

/// The whole anatomy as JSON.
fn anatomy_json(anatomy: &Anatomy, agents: &[Agent]) -> Value {
    let requests: Vec<Value> = anatomy
        .requests
        .iter()
        .map(|r| request_json(anatomy, r))
        .collect();
    json!({
        "requests": requests,
        "tools_unused": anatomy.findings.unused_tools,
        "compactions": anatomy.compactions,
        "agents": agents,
        "findings": {
            "largest_outputs": anatomy.findings.largest_outputs,
            "growth": anatomy.findings.growth,
            "headroom": anatomy.findings.headroom,
        },
        "context_window": anatomy.context_window,
        "auto_compact_tokens": anatomy.auto_compact_tokens,
    })
}

/// One request as JSON.
fn request_json(anatomy: &Anatomy, r: &RequestAnatomy) -> Value {
    let tools: Vec<Value> = r
        .tools
        .iter()
        .filter_map(|u| {
            let tool = anatomy.tools.get(u.tool as usize)?;
            Some(json!({"name": tool.name, "tokens": u.tokens, "called": tool.called}))
        })
        .collect();
    json!({
        "index": r.index,
        "kind": r.kind,
        "model": r.model,
        "tokens": r.tokens,
        "cached": r.cached,
        "by_source": r.by_source,
        "tools": tools,
    })
}

/// The anatomy in lines.
fn write_text(
    out: &mut impl std::io::Write,
    anatomy: &Anatomy,
    agents: &[Agent],
) -> std::io::Result<()> {
    for r in &anatomy.requests {
        let mut parts: Vec<(u64, &str)> = r
            .by_source
            .iter()
            .filter(|(_, t)| *t > 0)
            .map(|(s, t)| (t, s.label()))
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        let parts: Vec<String> = parts
            .iter()
            .map(|(t, s)| format!("{s} {}", grouped(*t)))
            .collect();
        writeln!(
            out,
            "request {}: {} tokens ({} cached) — {}",
            r.index,
            grouped(r.tokens),
            grouped(r.cached),
            parts.join(" · ")
        )?;
    }
    for t in &anatomy.findings.unused_tools {
        writeln!(
            out,
            "unused tool {}: {} tokens per request, {} over the session{}",
            t.name,
            grouped(t.tokens_per_request),
            grouped(t.tokens_total),
            t.usd_total
                .map_or(String::new(), |u| format!(" ({})", usd(u)))
        )?;
    }
    for o in &anatomy.findings.largest_outputs {
        writeln!(
            out,
            "large output of {}: {} tokens at request {} {} (carried by {} requests)",
            o.tool,
            grouped(o.tokens),
            o.request,
            o.pointer,
            o.carried_by
        )?;
    }
    for g in anatomy.findings.growth.iter().take(3) {
        writeln!(
            out,
            "grew: {} {} → {} tokens ({:.0} per turn)",
            g.source.label(),
            grouped(g.from),
            grouped(g.to),
            g.per_turn
        )?;
    }
    if let Some(h) = &anatomy.findings.headroom {
        let turns = |t: Option<u64>| t.map_or("unknown".to_string(), grouped);
        writeln!(
            out,
            "headroom: {} tokens, {:.0} per turn; turns to auto-compaction {}, to the window {}",
            grouped(h.tokens),
            h.growth_per_turn,
            turns(h.turns_to_auto_compact),
            turns(h.turns_to_window)
        )?;
    }
    for c in &anatomy.compactions {
        writeln!(
            out,
            "compaction at request {}: {} → {} tokens{}{}; re-warm {} tokens over {} request(s){}",
            c.index,
            grouped(c.tokens_before),
            c.tokens_after.map_or("?".to_string(), grouped),
            c.cost_usd
                .map_or(String::new(), |u| format!(", cost {}", usd(u))),
            c.read_tokens
                .map_or(String::new(), |r| format!(", read {}", grouped(r))),
            grouped(c.rewarm_tokens),
            c.rewarm_requests,
            if c.in_loop {
                " — in a compaction loop"
            } else {
                ""
            }
        )?;
    }
    for a in agents {
        writeln!(
            out,
            "{}agent {}{}: {}{}",
            "  ".repeat(a.depth),
            a.tag.thread,
            a.tag
                .kind
                .as_deref()
                .map_or(String::new(), |k| format!(" ({k})")),
            a.figures_text(),
            a.subtree_text().map_or(String::new(), |t| format!("; {t}"))
        )?;
    }
    Ok(())
}

/// One request's parts in lines.
fn write_parts(
    out: &mut impl std::io::Write,
    ledger: &Ledger,
    r: &RequestAnatomy,
) -> std::io::Result<()> {
    writeln!(
        out,
        "request {}: {} tokens ({} cached)",
        r.index,
        grouped(r.tokens),
        grouped(r.cached)
    )?;
    for p in anatomy::parts(ledger, r) {
        writeln!(
            out,
            "  {:<17} {:>9} {:>6.1}%  {}  {} {}",
            p.source.label(),
            grouped(p.tokens),
            p.tokens as f64 * 100.0 / r.tokens.max(1) as f64,
            if p.cached_tokens == p.tokens && p.tokens > 0 {
                "cached"
            } else if p.cached_tokens > 0 {
                "part  "
            } else {
                "      "
            },
            p.pointer,
            super::shown::shown(&if p.label.is_empty() {
                p.preview.clone()
            } else {
                format!("{}: {}", p.label, p.preview)
            })
        )?;
    }
    Ok(())
}
