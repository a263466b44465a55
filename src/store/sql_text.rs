//! The SQL boundary of the store's typed columns: [`RecordedState`] and [`ErrorClass`] are
//! written and read as their names (`outcomes.state`, `outcomes.error_class`), and nowhere
//! else turned into text. A stored state this build does not know is a read error naming it;
//! an unknown error class is kept as [`ErrorClass::Unknown`].

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use super::types::RecordedState;
use crate::core::stream::ErrorClass;

impl ToSql for RecordedState {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for RecordedState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value
            .as_str()?
            .parse()
            .map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

impl ToSql for ErrorClass {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for ErrorClass {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let Ok(class) = value.as_str()?.parse();
        Ok(class)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use rusqlite::Connection;

    use super::*;

    fn round_trip<T: ToSql + FromSql>(value: &T) -> rusqlite::Result<(String, T)> {
        let conn = Connection::open_in_memory()?;
        conn.execute("CREATE TABLE t (v TEXT NOT NULL)", [])?;
        conn.execute("INSERT INTO t (v) VALUES (?1)", [value])?;
        let text = conn.query_row("SELECT v FROM t", [], |row| row.get(0))?;
        let back = conn.query_row("SELECT v FROM t", [], |row| row.get(0))?;
        Ok((text, back))
    }

    #[test]
    fn every_recorded_state_round_trips_through_its_sql_text() {
        let texts: Vec<(String, RecordedState)> = RecordedState::ALL
            .iter()
            .map(|state| round_trip(state).expect("round trip"))
            .collect();
        assert_eq!(
            texts,
            vec![
                ("open".to_string(), RecordedState::Open),
                ("completed".to_string(), RecordedState::Completed),
                ("failed".to_string(), RecordedState::Failed),
            ]
        );
    }

    #[test]
    fn every_error_class_round_trips_through_its_sql_text() {
        for class in ErrorClass::KNOWN {
            let (text, back) = round_trip(&class).expect("round trip");
            assert_eq!((text.as_str(), back), (class.as_str(), class.clone()));
        }
    }

    #[test]
    fn an_unknown_stored_state_is_an_error_naming_it() {
        let conn = Connection::open_in_memory().expect("open");
        let read = conn.query_row("SELECT 'interrupted'", [], |row| {
            row.get::<_, RecordedState>(0)
        });
        let message = read.map_err(|e| e.to_string());
        assert_eq!(
            message,
            Err(
                "Conversion error from type Text at index: 0, unknown recorded state \
                 `interrupted` (expected open, completed or failed)"
                    .to_string()
            )
        );
    }

    #[test]
    fn an_unknown_stored_error_class_is_kept() {
        let conn = Connection::open_in_memory().expect("open");
        let read: ErrorClass = conn
            .query_row("SELECT 'http'", [], |row| row.get(0))
            .expect("read");
        assert_eq!(read, ErrorClass::Unknown("http".to_string()));
    }
}
