//! A stored session as the OpenTelemetry mapping's input ([`crate::core::otel`]): the session's
//! facts and, per request in order, its model, dialect, URL, times, outcome and usage in one
//! query; its input and answer text only when content is exported; for a subagent, its place in
//! its run (the root agent's session and its parent's).

use rusqlite::params;

use super::Store;
use super::error::StoreResult;
use super::summary::parse_usage;
use super::types::{RecordedState, SessionSummary};
use crate::core::otel::map::Ended;
use crate::core::otel::{AgentPlace, RequestFacts, SessionFacts};
use crate::core::stream::{ErrorClass, UsageCounts};

impl Store {
    /// Where subagent session `summary` sits in its run: its root agent's session and its
    /// parent's, when the parent is stored (ancestors followed at most 64 deep; a cycle stops
    /// the walk).
    fn agent_place(&self, summary: &SessionSummary) -> StoreResult<Option<AgentPlace>> {
        let Some(parent) = summary.parent_session else {
            return Ok(None);
        };
        let mut root = self.session(parent)?;
        let mut seen = vec![summary.id, root.id];
        for _ in 0..64 {
            match root.parent_session {
                Some(up) if !seen.contains(&up) => {
                    seen.push(up);
                    root = self.session(up)?;
                }
                _ => break,
            }
        }
        Ok(Some(AgentPlace {
            root: (root.id, root.created_us),
            parent,
        }))
    }

    /// Session `session_id` and its requests as the span mapping reads them; with `content`,
    /// each request's `instructions` and `input` and its answer's text.
    pub fn otel_facts(
        &self,
        session_id: i64,
        content: bool,
    ) -> StoreResult<(SessionFacts, Vec<RequestFacts>)> {
        let summary = self.session(session_id)?;
        let place = self.agent_place(&summary)?;
        let session = SessionFacts {
            id: summary.id,
            name: summary.name,
            source: summary.source,
            created_us: summary.created_us,
            agent: summary.agent,
            place,
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.id, r.model, r.dialect, r.provider, r.method, r.url, r.status, r.started_us,
                    r.total_us, o.state, o.error_class, o.error_message, o.usage, o.response_id,
                    o.server_model, o.events, o.first_event_us, o.first_text_us, o.total_us
             FROM requests r LEFT JOIN outcomes o ON o.request_id = r.id
             WHERE r.session_id = ?1 ORDER BY r.position",
        )?;
        let rows = stmt.query_map(params![session_id], |row| {
            let state: Option<RecordedState> = row
                .get::<_, Option<String>>(9)?
                .and_then(|s| s.parse().ok());
            let class: Option<ErrorClass> = row.get(10)?;
            let message: Option<String> = row.get(11)?;
            let ended = match state {
                Some(RecordedState::Completed) => Ended::Completed,
                Some(RecordedState::Failed) => Ended::Failed { class, message },
                Some(RecordedState::Open) => Ended::Open,
                None => Ended::Unknown,
            };
            let usage = parse_usage(row.get(12)?)
                .as_ref()
                .and_then(UsageCounts::from_value);
            let request_total: Option<i64> = row.get(8)?;
            let outcome_total: Option<i64> = row.get(18)?;
            Ok(RequestFacts {
                request_id: row.get(0)?,
                model: row.get(1)?,
                dialect: row.get(2)?,
                provider: row.get(3)?,
                method: row.get(4)?,
                url: row.get(5)?,
                status: row.get(6)?,
                started_us: row.get(7)?,
                total_us: request_total.or(outcome_total),
                ended,
                response_id: row.get(13)?,
                server_model: row.get(14)?,
                usage,
                events: u64::try_from(row.get::<_, Option<i64>>(15)?.unwrap_or(0)).unwrap_or(0),
                first_event_us: row.get(16)?,
                first_text_us: row.get(17)?,
                reasoning_effort: None,
                prompt_cache_key: None,
                input: None,
                output_text: None,
            })
        })?;
        let mut requests = rows.collect::<Result<Vec<_>, _>>()?;
        if content {
            for r in &mut requests {
                if let Some(body) = self.body(r.request_id)?.value {
                    let mut input = serde_json::Map::new();
                    for key in ["instructions", "input"] {
                        if let Some(v) = body.get(key) {
                            input.insert(key.to_string(), v.clone());
                        }
                    }
                    r.input = Some(serde_json::Value::Object(input));
                }
                r.output_text = self
                    .outcome(r.request_id)?
                    .map(|o| o.text)
                    .filter(|t| !t.is_empty());
            }
        }
        Ok((session, requests))
    }
}
