//! The agents of a run: a root conversation and the subagents it spawned (Codex marks a
//! subagent's requests with `x-openai-subagent` — `collab_spawn`, `review`, `compact`,
//! `memory_consolidation` — and `x-codex-parent-thread-id`; a rollout with its session source),
//! each with its requests, model, effort, tokens, cache read and written, dollars and its
//! cold-start writes, all from its ledger rows; the tree's totals include the children.

use serde::Serialize;

use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{Ledger, Row, RowKind};

/// Who sent a request: its thread, the thread that spawned it, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AgentTag {
    /// Its thread id.
    pub thread: String,
    /// The parent thread id (subagents).
    pub parent: Option<String>,
    /// What kind of subagent (`review`, `collab_spawn`, …; None for a root).
    pub kind: Option<String>,
}

impl AgentTag {
    /// The tag a Codex request carries: its headers (`thread-id`, `x-codex-parent-thread-id`,
    /// `x-openai-subagent`, matched without regard to case) first, then its body's
    /// `client_metadata` ([`AgentTag::from_body`]) for what the headers do not say. `None` when
    /// neither names a thread.
    pub fn from_request<'a>(
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        body: Option<&serde_json::Value>,
    ) -> Option<AgentTag> {
        let (mut thread, mut parent, mut kind) = (None, None, None);
        for (name, value) in headers {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let slot = if name.eq_ignore_ascii_case("thread-id") {
                &mut thread
            } else if name.eq_ignore_ascii_case("x-codex-parent-thread-id") {
                &mut parent
            } else if name.eq_ignore_ascii_case("x-openai-subagent") {
                &mut kind
            } else {
                continue;
            };
            slot.get_or_insert_with(|| value.to_string());
        }
        let from_body = body.and_then(AgentTag::from_body);
        let (body_thread, body_parent, body_kind) = match from_body {
            Some(tag) => (Some(tag.thread), tag.parent, tag.kind),
            None => (None, None, None),
        };
        Some(AgentTag {
            thread: thread.or(body_thread)?,
            parent: parent.or(body_parent),
            kind: kind.or(body_kind),
        })
    }

    /// True for a subagent: the request names the thread that spawned it, or how.
    pub fn is_subagent(&self) -> bool {
        self.parent.is_some() || self.kind.is_some()
    }

    /// The tag a Codex request body carries in its `client_metadata` (`thread_id`,
    /// `x-codex-parent-thread-id`, `x-openai-subagent`; the turn metadata's `parent_thread_id`
    /// and `subagent_kind` as fallbacks).
    pub fn from_body(body: &serde_json::Value) -> Option<AgentTag> {
        let meta = body.get("client_metadata")?;
        let text = |key: &str| {
            meta.get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let turn: Option<serde_json::Value> =
            text("x-codex-turn-metadata").and_then(|t| serde_json::from_str(&t).ok());
        let turn_text = |key: &str| {
            turn.as_ref()
                .and_then(|t| t.get(key))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        let thread = text("thread_id").or_else(|| turn_text("thread_id"))?;
        Some(AgentTag {
            thread,
            parent: text("x-codex-parent-thread-id").or_else(|| turn_text("parent_thread_id")),
            kind: text("x-openai-subagent").or_else(|| turn_text("subagent_kind")),
        })
    }
}

/// An agent's figures, from its ledger rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentFigures {
    /// Requests.
    pub requests: usize,
    /// Input tokens (the server's count where reported).
    pub tokens: u64,
    /// Read from the cache.
    pub read_tokens: u64,
    /// Written to the cache.
    pub write_tokens: u64,
    /// What its first request wrote or left uncached: the cost of starting cold.
    pub cold_start_tokens: u64,
    /// Input dollars paid, when every request is priced.
    pub cost_usd: Option<f64>,
}

impl AgentFigures {
    /// The figures of `rows` (one agent's requests, in order).
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> AgentFigures {
        let mut f = AgentFigures {
            cost_usd: Some(0.0),
            ..AgentFigures::default()
        };
        let mut first = true;
        for row in rows {
            f.requests += 1;
            f.tokens += row.input_tokens();
            f.read_tokens += row.read_tokens();
            f.write_tokens += row.write_tokens();
            if first && row.kind != RowKind::Undetermined {
                f.cold_start_tokens = row.write_tokens() + row.uncached_tokens();
                first = false;
            }
            f.cost_usd = match (f.cost_usd, row.cost_usd) {
                (Some(t), Some(d)) => Some(t + d.paid),
                (t, None) if row.prediction.undetermined => t,
                _ => None,
            };
        }
        f
    }

    /// Adds `other` (a child's totals).
    fn add(&mut self, other: &AgentFigures) {
        self.requests += other.requests;
        self.tokens += other.tokens;
        self.read_tokens += other.read_tokens;
        self.write_tokens += other.write_tokens;
        self.cold_start_tokens += other.cold_start_tokens;
        self.cost_usd = self.cost_usd.zip(other.cost_usd).map(|(a, b)| a + b);
    }
}

/// One agent of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    /// Who it is.
    #[serde(flatten)]
    pub tag: AgentTag,
    /// The stored session holding its requests, when stored.
    pub session: Option<i64>,
    /// Its model (the one most of its requests use).
    pub model: Option<String>,
    /// Its reasoning effort, when its requests say.
    pub effort: Option<String>,
    /// Its own figures.
    #[serde(flatten)]
    pub own: AgentFigures,
    /// Its figures with every descendant's.
    pub total: AgentFigures,
    /// Depth in the tree (0: a root).
    pub depth: usize,
    /// Whether its parent is among the agents (false for a root, or a child whose parent the
    /// recording does not have).
    pub parent_known: bool,
}

impl Agent {
    /// Its own figures in words: `3 request(s), 12,345 tokens, read 9,000, written 0, cold
    /// start 8,836, $0.071` (the dollars when every request is priced).
    pub fn figures_text(&self) -> String {
        let f = &self.own;
        format!(
            "{} request(s), {} tokens, read {}, written {}, cold start {}{}",
            f.requests,
            grouped(f.tokens),
            grouped(f.read_tokens),
            grouped(f.write_tokens),
            grouped(f.cold_start_tokens),
            f.cost_usd
                .map_or(String::new(), |u| format!(", {}", usd(u)))
        )
    }

    /// Its totals with its subagents' in words (`with its subagents 10 request(s), 90,559
    /// tokens, $0.13`), when it has any.
    pub fn subtree_text(&self) -> Option<String> {
        (self.total.requests > self.own.requests).then(|| {
            format!(
                "with its subagents {} request(s), {} tokens{}",
                self.total.requests,
                grouped(self.total.tokens),
                self.total
                    .cost_usd
                    .map_or(String::new(), |u| format!(", {}", usd(u)))
            )
        })
    }
}

/// An agent before the tree is built.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentNode {
    /// Who it is.
    pub tag: AgentTag,
    /// Its stored session.
    pub session: Option<i64>,
    /// Its model.
    pub model: Option<String>,
    /// Its effort.
    pub effort: Option<String>,
    /// Its figures.
    pub figures: AgentFigures,
}

impl AgentNode {
    /// The node of one whole session's ledger.
    pub fn of_ledger(tag: AgentTag, session: Option<i64>, ledger: &Ledger) -> AgentNode {
        let rows: Vec<usize> = (0..ledger.rows.len()).collect();
        AgentNode::of_rows(tag, session, ledger, &rows)
    }

    /// The node of some rows of a ledger (one thread's requests of a mixed recording).
    pub fn of_rows(
        tag: AgentTag,
        session: Option<i64>,
        ledger: &Ledger,
        rows: &[usize],
    ) -> AgentNode {
        let mut models: Vec<(&str, usize)> = Vec::new();
        for &i in rows {
            let Some(row) = ledger.rows.get(i) else {
                continue;
            };
            match models.iter_mut().find(|(m, _)| *m == row.model) {
                Some((_, n)) => *n += 1,
                None => models.push((&row.model, 1)),
            }
        }
        let model = models
            .iter()
            .max_by_key(|(_, n)| *n)
            .map(|(m, _)| m.to_string());
        let effort = rows.iter().rev().find_map(|&i| super::effort_of(ledger, i));
        AgentNode {
            tag,
            session,
            model,
            effort,
            figures: AgentFigures::of(rows.iter().filter_map(|&i| ledger.rows.get(i))),
        }
    }
}

/// The agents of `nodes` as a tree, depth first (roots in the given order, each followed by its
/// children in the given order), each with its totals including its descendants. A node whose
/// parent is not among them is a root (with `parent_known: false` when it names one).
pub fn tree(nodes: Vec<AgentNode>) -> Vec<Agent> {
    let index_of = |thread: &str| nodes.iter().position(|n| n.tag.thread == thread);
    let parent: Vec<Option<usize>> = nodes
        .iter()
        .enumerate()
        .map(|(k, n)| {
            n.tag
                .parent
                .as_deref()
                .and_then(index_of)
                .filter(|p| *p != k)
        })
        .collect();
    // Break cycles: a node whose ancestry returns to itself is a root.
    let parent: Vec<Option<usize>> = (0..nodes.len())
        .map(|k| {
            let mut seen = vec![false; nodes.len()];
            let mut at = k;
            seen[at] = true;
            while let Some(p) = parent[at] {
                if seen[p] {
                    return None;
                }
                seen[p] = true;
                at = p;
            }
            parent[k]
        })
        .collect();
    let children =
        |k: usize| -> Vec<usize> { (0..nodes.len()).filter(|c| parent[*c] == Some(k)).collect() };
    let mut order: Vec<(usize, usize)> = Vec::new();
    let mut stack: Vec<(usize, usize)> = (0..nodes.len())
        .filter(|k| parent[*k].is_none())
        .rev()
        .map(|k| (k, 0))
        .collect();
    while let Some((k, depth)) = stack.pop() {
        order.push((k, depth));
        for c in children(k).into_iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    let mut totals: Vec<AgentFigures> = nodes.iter().map(|n| n.figures.clone()).collect();
    for &(k, _) in order.iter().rev() {
        if let Some(p) = parent[k] {
            let child = totals[k].clone();
            totals[p].add(&child);
        }
    }
    order
        .into_iter()
        .map(|(k, depth)| {
            let n = &nodes[k];
            Agent {
                tag: n.tag.clone(),
                session: n.session,
                model: n.model.clone(),
                effort: n.effort.clone(),
                own: n.figures.clone(),
                total: totals[k].clone(),
                depth,
                parent_known: parent[k].is_some(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(thread: &str, parent: Option<&str>, requests: usize, tokens: u64) -> AgentNode {
        AgentNode {
            tag: AgentTag {
                thread: thread.into(),
                parent: parent.map(Into::into),
                kind: parent.map(|_| "collab_spawn".into()),
            },
            session: None,
            model: None,
            effort: None,
            figures: AgentFigures {
                requests,
                tokens,
                cost_usd: Some(tokens as f64 / 1000.0),
                ..AgentFigures::default()
            },
        }
    }

    #[test]
    fn children_follow_their_parent_and_add_to_its_totals() {
        // Children listed before their parent, a grandchild, an orphan, a cycle.
        let agents = tree(vec![
            node("c1", Some("root"), 2, 200),
            node("root", None, 3, 1000),
            node("g1", Some("c1"), 1, 50),
            node("orphan", Some("gone"), 1, 10),
            node("c2", Some("root"), 1, 100),
        ]);
        let got: Vec<(&str, usize, usize, u64, bool)> = agents
            .iter()
            .map(|a| {
                (
                    a.tag.thread.as_str(),
                    a.depth,
                    a.total.requests,
                    a.total.tokens,
                    a.parent_known,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("root", 0, 7, 1350, false),
                ("c1", 1, 3, 250, true),
                ("g1", 2, 1, 50, true),
                ("c2", 1, 1, 100, true),
                ("orphan", 0, 1, 10, false),
            ]
        );
        assert_eq!(agents[0].total.cost_usd, Some(1.35));
        let cycle = tree(vec![node("a", Some("b"), 1, 1), node("b", Some("a"), 1, 1)]);
        assert_eq!(cycle.len(), 2);
    }

    #[test]
    fn a_codex_body_names_its_thread_parent_and_kind() {
        let body = json!({"client_metadata": {
            "thread_id": "child", "x-openai-subagent": "review",
            "x-codex-parent-thread-id": "parent", "session_id": "parent"}});
        assert_eq!(
            AgentTag::from_body(&body),
            Some(AgentTag {
                thread: "child".into(),
                parent: Some("parent".into()),
                kind: Some("review".into())
            })
        );
        let turn_only = json!({"client_metadata": {"x-codex-turn-metadata":
            "{\"thread_id\":\"t\",\"parent_thread_id\":\"p\",\"subagent_kind\":\"collab_spawn\"}"}});
        assert_eq!(
            AgentTag::from_body(&turn_only),
            Some(AgentTag {
                thread: "t".into(),
                parent: Some("p".into()),
                kind: Some("collab_spawn".into())
            })
        );
        assert_eq!(AgentTag::from_body(&json!({"model": "m"})), None);
    }

    #[test]
    fn headers_come_first_and_the_body_fills_in() {
        // Codex 0.171's collab_spawn child, as captured: headers and client_metadata agree.
        let headers = [
            ("x-codex-parent-thread-id", "root"),
            ("X-OpenAI-Subagent", "collab_spawn"),
            ("session-id", "root"),
            ("thread-id", "child"),
        ];
        let child = AgentTag {
            thread: "child".into(),
            parent: Some("root".into()),
            kind: Some("collab_spawn".into()),
        };
        assert_eq!(AgentTag::from_request(headers, None), Some(child.clone()));
        assert!(child.is_subagent());
        // The body alone (a HAR without headers), and headers that say less than the body.
        let body = json!({"client_metadata": {"thread_id": "child",
            "x-codex-parent-thread-id": "root", "x-openai-subagent": "collab_spawn"}});
        assert_eq!(AgentTag::from_request([], Some(&body)), Some(child.clone()));
        assert_eq!(
            AgentTag::from_request([("thread-id", "child")], Some(&body)),
            Some(child)
        );
        // A root: its thread and nothing else; no thread anywhere: no tag.
        let root = AgentTag::from_request([("thread-id", " root "), ("session-id", "root")], None);
        assert_eq!(
            root,
            Some(AgentTag {
                thread: "root".into(),
                ..AgentTag::default()
            })
        );
        assert!(!root.is_some_and(|r| r.is_subagent()));
        assert_eq!(AgentTag::from_request([("session-id", "s")], None), None);
    }
}
