//! The filtered session listing: sessions by source (proxy, send, import, rollout — an import
//! whose requests came from a Codex rollout —, form, replay), creation time range, model or
//! name, and whether a request failed or was interrupted (classed as the request table classes
//! them, `summary::OutcomeClass`), one session left out (the one whose delete can still be undone), newest first, in
//! bounded pages — one SQL query. With a search text the search (`read.rs`) finds the sessions
//! and each is then held against the filter, within [`MAX_SEARCHED`] hits. Also renaming a
//! session.

use rusqlite::{OptionalExtension as _, named_params};

use super::error::StoreResult;
use super::read::{SESSION_COLUMNS, like_pattern, session_row};
use super::types::{Page, SessionSummary};
use super::{Store, StoreError};

/// Search hits held against the filter at most (a search page beyond them is empty).
pub const MAX_SEARCHED: u64 = 2_000;

/// Which sessions a listing shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionFilter {
    /// Source: `proxy`, `send`, `import` (not from a rollout), `rollout`, `form`, `replay`
    /// (None: any).
    pub source: Option<String>,
    /// Created at or after (Unix microseconds).
    pub from_us: Option<i64>,
    /// Created before (Unix microseconds).
    pub to_us: Option<i64>,
    /// Name or model contains this (empty: any).
    pub model: String,
    /// Only sessions with a request of this class (None: any).
    pub status: Option<SessionStatus>,
    /// Leave this session out (a delete that can still be undone).
    pub exclude: Option<i64>,
}

/// A class of request a session must have to be listed, as the request table's status filter
/// classes requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    /// A failed request: a stream that failed or ended incomplete, a non-2xx HTTP answer, or
    /// no answer recorded.
    Failed,
    /// An interrupted request: stopped on purpose (Ctrl-C, Stop, the client went away) or still
    /// open when recording stopped.
    Interrupted,
}

impl SessionStatus {
    /// Every class, in menu order.
    pub const ALL: [Self; 2] = [Self::Failed, Self::Interrupted];

    /// The name bound into the SQL and shown in menus.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }
}

/// The filter as SQL over `sessions s` (named parameters, see [`bind`]).
const CONDITIONS: &str = "(:source IS NULL OR s.source = :source)
    AND (:rollout IS NULL OR :rollout = EXISTS (SELECT 1 FROM requests r
        WHERE r.session_id = s.id AND r.extra LIKE '%\"rollout\"%'))
    AND (:from_us IS NULL OR s.created_us >= :from_us)
    AND (:to_us IS NULL OR s.created_us < :to_us)
    AND (:model IS NULL OR s.model LIKE :model ESCAPE '\\' OR s.name LIKE :model ESCAPE '\\')
    AND (:exclude IS NULL OR s.id <> :exclude)
    AND (:status IS NULL OR EXISTS (SELECT 1 FROM requests r
        LEFT JOIN outcomes o ON o.request_id = r.id
        WHERE r.session_id = s.id AND CASE
            WHEN COALESCE(r.status NOT BETWEEN 200 AND 299 AND r.status <> 101, 0)
                THEN :status = 'failed'
            WHEN COALESCE(o.state, '') = 'open'
                OR (o.state = 'failed' AND o.error_class IN ('cancelled', 'interrupted'))
                THEN :status = 'interrupted'
            WHEN COALESCE(o.state, '') = 'completed' THEN 0
            ELSE :status = 'failed' END))";

impl SessionFilter {
    /// The stored source and whether it must (Some(true)) or must not (Some(false)) come from
    /// a rollout.
    fn source_sql(&self) -> (Option<&str>, Option<bool>) {
        match self.source.as_deref() {
            None => (None, None),
            Some("rollout") => (Some("import"), Some(true)),
            Some("import") => (Some("import"), Some(false)),
            Some(other) => (Some(other), None),
        }
    }
}

impl Store {
    /// Sessions the filter admits, newest first; with `search` (not empty), those the search
    /// finds ([`Store::search_sessions`]) that the filter admits.
    pub fn list_sessions_filtered(
        &self,
        filter: &SessionFilter,
        search: &str,
        page: Page,
    ) -> StoreResult<Vec<SessionSummary>> {
        let (source, rollout) = filter.source_sql();
        let status = filter.status.map(SessionStatus::as_str);
        let model = (!filter.model.trim().is_empty()).then(|| like_pattern(filter.model.trim()));
        let limit = i64::try_from(page.limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
        if search.trim().is_empty() {
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions s WHERE {CONDITIONS}
                 ORDER BY s.created_us DESC, s.id DESC LIMIT :limit OFFSET :offset"
            ))?;
            let rows = stmt.query_map(
                named_params! {
                    ":source": source, ":rollout": rollout, ":from_us": filter.from_us,
                    ":to_us": filter.to_us, ":model": model, ":exclude": filter.exclude,
                    ":status": status, ":limit": limit, ":offset": offset,
                },
                session_row,
            )?;
            return Ok(rows.collect::<Result<_, _>>()?);
        }
        let found = self.search_sessions(
            search.trim(),
            Page {
                offset: 0,
                limit: MAX_SEARCHED,
            },
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT 1 FROM sessions s WHERE s.id = :id AND {CONDITIONS}"
        ))?;
        let mut kept = Vec::new();
        for session in found {
            let admitted = stmt
                .query_row(
                    named_params! {
                        ":id": session.id,
                        ":source": source, ":rollout": rollout, ":from_us": filter.from_us,
                        ":to_us": filter.to_us, ":model": model, ":exclude": filter.exclude,
                        ":status": status,
                    },
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if admitted {
                kept.push(session);
            }
        }
        Ok(kept
            .into_iter()
            .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
            .take(usize::try_from(page.limit).unwrap_or(usize::MAX))
            .collect())
    }

    /// Renames a session (the name stored redacted, as every name is).
    pub fn rename_session(&mut self, session_id: i64, name: &str) -> StoreResult<()> {
        let name = crate::core::redact::try_redacted(name)
            .map_err(StoreError::redaction("session name"))?;
        let conn = self.writable()?;
        let changed = conn.execute(
            "UPDATE sessions SET name = ?1 WHERE id = ?2",
            rusqlite::params![name, session_id],
        )?;
        if changed == 0 {
            return Err(StoreError::NoSession(session_id));
        }
        Ok(())
    }
}
