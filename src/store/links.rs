//! Links between sessions: a replay session (a client served from a recording by the replay
//! endpoint) points at the recording it was measured against (schema version 2), and an agent's
//! session names its thread, the thread that spawned it and how (schema 6): a subagent's
//! parent is the session whose thread is its parent thread.

use rusqlite::{Connection, OptionalExtension as _, params};

use super::error::StoreResult;
use super::{Store, StoreError};
use crate::core::anatomy::AgentTag;

/// The most sessions [`Store::agent_sessions`] returns: a run of 74 subagents is long; a
/// crafted database with a million linked sessions is bounded.
pub const MAX_AGENT_SESSIONS: usize = 10_000;

/// The agent tag of three consecutive columns of `row` from `first` on (`thread`,
/// `parent_thread`, `agent_kind`): `None` when the session names no thread.
pub(super) fn agent_columns(
    row: &rusqlite::Row<'_>,
    first: usize,
) -> rusqlite::Result<Option<AgentTag>> {
    let thread: Option<String> = row.get(first)?;
    let (parent, kind) = (row.get(first + 1)?, row.get(first + 2)?);
    Ok(thread.map(|thread| AgentTag {
        thread,
        parent,
        kind,
    }))
}

/// Records that session `session` is the agent `agent` (on `conn`, inside the caller's
/// transaction if it has one).
pub(super) fn set_agent(conn: &Connection, session: i64, agent: &AgentTag) -> StoreResult<()> {
    let changed = conn.execute(
        "UPDATE sessions SET thread = ?2, parent_thread = ?3, agent_kind = ?4 WHERE id = ?1",
        params![session, agent.thread, agent.parent, agent.kind],
    )?;
    if changed == 0 {
        return Err(StoreError::NoSession(session));
    }
    Ok(())
}

/// Records that session `replay` was served from recording `recording` (on `conn`, inside the
/// caller's transaction if it has one).
pub(super) fn set_replay_of(conn: &Connection, replay: i64, recording: i64) -> StoreResult<()> {
    if !super::write::session_exists(conn, recording)? {
        return Err(StoreError::NoSession(recording));
    }
    let changed = conn.execute(
        "UPDATE sessions SET replay_of = ?2 WHERE id = ?1",
        params![replay, recording],
    )?;
    if changed == 0 {
        return Err(StoreError::NoSession(replay));
    }
    Ok(())
}

impl Store {
    /// Records that session `replay` was served from recording `recording`.
    pub fn link_replay(&mut self, replay: i64, recording: i64) -> StoreResult<()> {
        let conn = self.writable()?;
        set_replay_of(conn, replay, recording)
    }

    /// Records that session `session` is the agent `agent` (its thread, parent thread, kind).
    pub fn set_agent(&mut self, session: i64, agent: &AgentTag) -> StoreResult<()> {
        let conn = self.writable()?;
        set_agent(conn, session, agent)
    }

    /// The agent session `session` is, when its recording says.
    pub fn agent(&self, session: i64) -> StoreResult<Option<AgentTag>> {
        self.conn
            .query_row(
                "SELECT thread, parent_thread, agent_kind FROM sessions WHERE id = ?1",
                [session],
                |r| agent_columns(r, 0),
            )
            .optional()?
            .ok_or(StoreError::NoSession(session))
    }

    /// Session `root` and every session below it (its subagents, theirs, …), breadth first,
    /// each with its agent tag. At most [`MAX_AGENT_SESSIONS`]; a cycle is followed once.
    pub fn agent_sessions(&self, root: i64) -> StoreResult<Vec<(i64, Option<AgentTag>)>> {
        let mut out = vec![(root, self.agent(root)?)];
        let mut seen = std::collections::HashSet::from([root]);
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, thread, parent_thread, agent_kind FROM sessions \
             WHERE parent_thread = ?1 AND thread IS NOT NULL ORDER BY id",
        )?;
        let mut next = 0;
        while next < out.len() && out.len() < MAX_AGENT_SESSIONS {
            let Some(thread) = out[next].1.as_ref().map(|t| t.thread.clone()) else {
                next += 1;
                continue;
            };
            next += 1;
            let rows = stmt.query_map([&thread], |r| {
                Ok((r.get::<_, i64>(0)?, agent_columns(r, 1)?))
            })?;
            for row in rows {
                let (id, tag) = row?;
                if out.len() >= MAX_AGENT_SESSIONS {
                    break;
                }
                if seen.insert(id) {
                    out.push((id, tag));
                }
            }
        }
        Ok(out)
    }

    /// The session of the agent that spawned session `session`'s agent, when it is stored (as
    /// the session list finds it: [`super::SessionSummary::parent_session`]); `None` for a
    /// session that is not there either.
    pub fn parent_session(&self, session: i64) -> StoreResult<Option<i64>> {
        match self.session(session) {
            Ok(summary) => Ok(summary.parent_session),
            Err(StoreError::NoSession(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The recording session `session` replayed, if it is a replay.
    pub fn replay_of(&self, session: i64) -> StoreResult<Option<i64>> {
        self.conn
            .query_row(
                "SELECT replay_of FROM sessions WHERE id = ?1",
                [session],
                |r| r.get::<_, Option<i64>>(0),
            )
            .optional()?
            .ok_or(StoreError::NoSession(session))
    }

    /// The replay sessions measured against `recording`, oldest first.
    pub fn replays_of(&self, recording: i64) -> StoreResult<Vec<i64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM sessions WHERE replay_of = ?1 ORDER BY id")?;
        let rows = stmt.query_map([recording], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{NewSession, Source};
    use super::*;

    fn session(store: &mut Store, name: &str, source: Source) -> i64 {
        store
            .create_session(&NewSession {
                name: name.to_string(),
                source,
                provider: None,
                model: None,
                created_us: 1,
            })
            .expect("session")
    }

    #[test]
    fn replays_link_to_their_recording() {
        let mut store = Store::open_in_memory().expect("store");
        let recording = session(&mut store, "rec", Source::Proxy);
        let replay = session(&mut store, "replay", Source::Replay);
        assert_eq!(store.replay_of(replay).expect("read"), None);
        store.link_replay(replay, recording).expect("link");
        assert_eq!(store.replay_of(replay).expect("read"), Some(recording));
        assert_eq!(store.replays_of(recording).expect("read"), vec![replay]);
        assert!(matches!(
            store.link_replay(replay, 999),
            Err(StoreError::NoSession(999))
        ));
        store.delete_session(recording).expect("delete");
        assert_eq!(store.replay_of(replay).expect("read"), None);
    }
}
