//! The Traffic view's filters — client, status class, model, text — and the shown rows in order.
//! The shown list is kept up to date as rows arrive and change (one row checked at a time), and
//! computed whole only when the filter changes: one substring search per row over its kept
//! lower-cased text, so 10,000 rows filter within a frame.

use super::row::TrafficRow;
use crate::app::session_view::filter::StatusClass;

/// What the Traffic view shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrafficFilter {
    /// Only this client (None: any).
    pub client: Option<String>,
    /// Status class (in flight counts with interrupted: not ended).
    pub status: StatusClass,
    /// Model contains this (case-insensitive; empty: any).
    pub model: String,
    /// Method, URL, client, model, status, badge or session contains this (case-insensitive).
    pub text: String,
}

impl TrafficFilter {
    /// True when nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.client.is_none()
            && self.status == StatusClass::All
            && self.model.trim().is_empty()
            && self.text.trim().is_empty()
    }

    /// The filter with its needles lower-cased once.
    pub fn prepared(&self) -> Prepared<'_> {
        Prepared {
            filter: self,
            model: self.model.trim().to_lowercase(),
            text: self.text.trim().to_lowercase(),
        }
    }
}

/// A filter ready to test rows.
#[derive(Debug)]
pub struct Prepared<'a> {
    filter: &'a TrafficFilter,
    model: String,
    text: String,
}

impl Prepared<'_> {
    /// True when `row` is shown.
    pub fn admits(&self, row: &TrafficRow) -> bool {
        let filter = self.filter;
        if let Some(client) = &filter.client
            && row.client.as_ref() != Some(client)
        {
            return false;
        }
        if !filter.status.admits(&row.outcome_class()) {
            return false;
        }
        if !self.model.is_empty()
            && !row
                .model
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(&self.model))
        {
            return false;
        }
        self.text.is_empty() || row.haystack.contains(&self.text)
    }
}

/// The shown rows (ids, oldest first) of `rows` under `filter`.
pub fn shown<'a>(rows: impl Iterator<Item = &'a TrafficRow>, filter: &TrafficFilter) -> Vec<u64> {
    let prepared = filter.prepared();
    rows.filter(|r| prepared.admits(r)).map(|r| r.id).collect()
}

/// Puts `row` in `visible` (ids in increasing order) or takes it out, as the filter says.
pub fn update_one(visible: &mut Vec<u64>, row: &TrafficRow, filter: &TrafficFilter) {
    let admitted = filter.prepared().admits(row);
    match (visible.binary_search(&row.id), admitted) {
        (Ok(i), false) => {
            visible.remove(i);
        }
        (Err(i), true) => visible.insert(i, row.id),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::app::traffic::row::{Origin, StoredDetails};
    use crate::store::{OutcomeRecord, RecordedState};

    fn row(id: u64, client: &str, model: &str, state: Option<RecordedState>) -> TrafficRow {
        let mut row = TrafficRow::started(id, Origin::Proxy, "POST", "http://up/v1/responses", 0);
        row.stored(StoredDetails {
            session: 1,
            position: 0,
            model: Some(model.to_string()),
            client: Some(client.to_string()),
            status: Some(200),
            outcome: state.map(|state| OutcomeRecord {
                state,
                ..OutcomeRecord::default()
            }),
            started_us: None,
            total_us: None,
        });
        row
    }

    #[test]
    fn each_filter_narrows_and_rows_move_in_and_out_as_they_change() {
        let rows = [
            row(1, "codex_exec", "gpt-5.5", Some(RecordedState::Completed)),
            row(2, "curl", "gpt-5.5-mini", Some(RecordedState::Failed)),
            row(3, "codex_exec", "gpt-6.2-sol", None),
        ];
        let cases: Vec<(TrafficFilter, Vec<u64>)> = vec![
            (TrafficFilter::default(), vec![1, 2, 3]),
            (
                TrafficFilter {
                    client: Some("codex_exec".to_string()),
                    ..TrafficFilter::default()
                },
                vec![1, 3],
            ),
            (
                TrafficFilter {
                    status: StatusClass::Failed,
                    ..TrafficFilter::default()
                },
                vec![2],
            ),
            (
                TrafficFilter {
                    status: StatusClass::Interrupted,
                    ..TrafficFilter::default()
                },
                vec![3],
            ),
            (
                TrafficFilter {
                    model: "GPT-5.5".to_string(),
                    ..TrafficFilter::default()
                },
                vec![1, 2],
            ),
            (
                TrafficFilter {
                    text: "CURL".to_string(),
                    ..TrafficFilter::default()
                },
                vec![2],
            ),
        ];
        let got: Vec<(TrafficFilter, Vec<u64>)> = cases
            .iter()
            .map(|(f, _)| (f.clone(), shown(rows.iter(), f)))
            .collect();
        assert_eq!(got, cases);
        // Row 3 completes: under "ok" it comes in, in order; failing again takes it out.
        let ok = TrafficFilter {
            status: StatusClass::Ok,
            ..TrafficFilter::default()
        };
        let mut visible = shown(rows.iter(), &ok);
        assert_eq!(visible, vec![1]);
        let mut third = rows[2].clone();
        third.finished(
            Some(200),
            &OutcomeRecord {
                state: RecordedState::Completed,
                ..OutcomeRecord::default()
            },
        );
        update_one(&mut visible, &third, &ok);
        assert_eq!(visible, vec![1, 3]);
        let mut first = rows[0].clone();
        first.finished(Some(500), &OutcomeRecord::default());
        update_one(&mut visible, &first, &ok);
        assert_eq!(visible, vec![3]);
    }
}
