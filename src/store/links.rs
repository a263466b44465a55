//! Links between sessions: a replay session (a client served from a recording by the replay
//! endpoint) points at the recording it was measured against (schema version 2).

use rusqlite::{Connection, OptionalExtension as _, params};

use super::error::StoreResult;
use super::{Store, StoreError};

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
