//! One row of the Traffic view: a request the app saw go by — proxied, served by the replay
//! endpoint, sent from the workbench or re-sent — first as the live events said (method, URL,
//! status, outcome, usage), then as the store has it once recorded ([`StoredDetails`]: model,
//! client, position in its session, the stored outcome), and its prefix badge once its session
//! was analysed. Its lower-cased search text is kept with it, so filtering 10,000 rows costs a
//! substring search each, not a formatting pass.

use crate::app::session_view::PrefixBadge;
use crate::store::summary::{OutcomeClass, usage_tokens};
use crate::store::{OutcomeRecord, RecordedState};

/// Where a request came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The recording proxy (a real client).
    Proxy,
    /// The replay endpoint (a client served a recording).
    Replay,
    /// The workbench's Send.
    Send,
    /// The Sessions view's Re-send.
    Resend,
}

impl Origin {
    /// Short name (`proxy`, `replay`, `send`, `re-send`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Proxy => "proxy",
            Self::Replay => "replay",
            Self::Send => "send",
            Self::Resend => "re-send",
        }
    }
}

/// What the store says about a recorded request (read on a worker, `traffic/jobs.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDetails {
    /// The session.
    pub session: i64,
    /// Its position (turn) in the session.
    pub position: i64,
    /// The body's model.
    pub model: Option<String>,
    /// The client, from its headers (`codex_exec`, `OpenAI/Python`, `curl`).
    pub client: Option<String>,
    /// HTTP status.
    pub status: Option<u16>,
    /// The stored outcome, when it is stored.
    pub outcome: Option<OutcomeRecord>,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
}

/// One request of the Traffic view.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficRow {
    /// The row's number in this run of the app (increasing; the newest is the highest).
    pub id: u64,
    /// Where it came from.
    pub origin: Origin,
    /// `POST`, or `WS` for a WebSocket `response.create`.
    pub method: String,
    /// The URL (credentials redacted).
    pub url: String,
    /// The client, once known.
    pub client: Option<String>,
    /// The model, once known.
    pub model: Option<String>,
    /// `standard` / `lite`, when known.
    pub dialect: Option<String>,
    /// HTTP status, once answered.
    pub status: Option<u16>,
    /// How it ended (None: in flight).
    pub outcome: Option<OutcomeClass>,
    /// The failure message, when it failed.
    pub error: Option<String>,
    /// Input tokens the server reported.
    pub input_tokens: Option<u64>,
    /// Cached input tokens the server reported (the cache read).
    pub cached_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Start time, Unix microseconds.
    pub started_us: i64,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// The stored session, once recorded.
    pub session: Option<i64>,
    /// The stored request, once recorded.
    pub request: Option<i64>,
    /// Its position in the session, once read.
    pub position: Option<i64>,
    /// Its prefix badge, once its session was analysed.
    pub badge: Option<PrefixBadge>,
    /// Lower-cased text the filter searches (method, URL, client, model, status, badge, session).
    pub(super) haystack: String,
}

impl TrafficRow {
    /// A row for a request that just started.
    pub fn started(id: u64, origin: Origin, method: &str, url: &str, started_us: i64) -> Self {
        let mut row = Self {
            id,
            origin,
            method: method.to_string(),
            url: crate::core::redact::redact_url(url),
            client: None,
            model: None,
            dialect: None,
            status: None,
            outcome: None,
            error: None,
            input_tokens: None,
            cached_tokens: None,
            output_tokens: None,
            started_us,
            total_us: None,
            session: None,
            request: None,
            position: None,
            badge: None,
            haystack: String::new(),
        };
        row.refresh_haystack();
        row
    }

    /// The outcome class the filters go by: in flight counts as open.
    pub fn outcome_class(&self) -> OutcomeClass {
        self.outcome.clone().unwrap_or(OutcomeClass::Open)
    }

    /// True while no outcome arrived.
    pub fn in_flight(&self) -> bool {
        self.outcome.is_none()
    }

    /// The status cell: `200 · completed`, `HTTP 429`, `WS · failed: …`, `in flight`.
    pub fn status_text(&self) -> String {
        match (&self.outcome, self.status) {
            (None, Some(status)) => format!("{status} · in flight"),
            (None, None) => "in flight".to_string(),
            (Some(OutcomeClass::Http(code)), _) => format!("! HTTP {code}"),
            (Some(outcome), status) => {
                let flag = if outcome.is_problem() { "! " } else { "" };
                match status {
                    Some(101) => format!("{flag}WS · {}", outcome.label()),
                    Some(status) => format!("{flag}{status} · {}", outcome.label()),
                    None => format!("{flag}{}", outcome.label()),
                }
            }
        }
    }

    /// The path of the URL (`/v1/responses`), for the narrow method cell's hover.
    pub fn path(&self) -> &str {
        self.url
            .split_once("://")
            .and_then(|(_, rest)| rest.find('/').map(|i| &rest[i..]))
            .unwrap_or(&self.url)
    }

    /// Takes what the proxy (or a send) reported at the end: status, outcome, usage, duration.
    pub fn finished(&mut self, status: Option<u16>, outcome: &OutcomeRecord) {
        self.status = status.or(self.status);
        self.outcome = Some(OutcomeClass::of(
            self.status,
            Some(outcome.state),
            outcome.error_class.as_ref(),
        ));
        self.error = outcome.error_message.clone();
        if let Some(usage) = &outcome.usage {
            let (input, cached, output) = usage_tokens(usage);
            self.input_tokens = input;
            self.cached_tokens = cached;
            self.output_tokens = output;
        }
        self.total_us = outcome.total_us.or(self.total_us);
        if self.model.is_none() {
            self.model.clone_from(&outcome.server_model);
        }
        self.refresh_haystack();
    }

    /// Takes what the store says (the stored truth wins over what was seen live).
    pub fn stored(&mut self, details: StoredDetails) {
        self.session = Some(details.session);
        self.position = Some(details.position);
        if details.model.is_some() {
            self.model = details.model;
        }
        // A send's client is the app (its Codex-like headers name Codex's originator).
        if details.client.is_some() && !matches!(self.origin, Origin::Send | Origin::Resend) {
            self.client = details.client;
        }
        if let Some(started) = details.started_us {
            self.started_us = started;
        }
        if let Some(outcome) = details.outcome.filter(|o| o.state != RecordedState::Open) {
            self.finished(details.status, &outcome);
        } else {
            self.status = details.status.or(self.status);
        }
        self.total_us = details.total_us.or(self.total_us);
        self.refresh_haystack();
    }

    /// Sets the prefix badge.
    pub fn set_badge(&mut self, badge: Option<PrefixBadge>) {
        self.badge = badge;
        self.refresh_haystack();
    }

    pub(super) fn refresh_haystack(&mut self) {
        let badge = self.badge.as_ref().map(PrefixBadge::label);
        let session = self.session.map(|s| format!("#{s}"));
        let status = self.status_text();
        let parts = [
            Some(self.origin.label()),
            Some(self.method.as_str()),
            Some(self.url.as_str()),
            self.client.as_deref(),
            self.model.as_deref(),
            self.dialect.as_deref(),
            Some(status.as_str()),
            self.error.as_deref(),
            badge.as_deref(),
            session.as_deref(),
        ];
        let mut text = String::new();
        for part in parts.into_iter().flatten() {
            text.push_str(&part.to_lowercase());
            text.push('\n');
        }
        self.haystack = text;
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::core::stream::ErrorClass;

    #[test]
    fn a_row_reads_as_its_events_and_then_as_stored() {
        let mut row = TrafficRow::started(
            1,
            Origin::Proxy,
            "POST",
            "https://api.openai.com/v1/responses?key=SECRET123",
            10,
        );
        assert_eq!(
            (row.url.as_str(), row.path(), row.status_text()),
            (
                "https://api.openai.com/v1/responses?key=<redacted>",
                "/v1/responses?key=<redacted>",
                "in flight".to_string()
            )
        );
        let outcome = OutcomeRecord {
            state: RecordedState::Failed,
            error_class: Some(ErrorClass::ServerOverloaded),
            error_message: Some("slow down".to_string()),
            usage: None,
            ..OutcomeRecord::default()
        };
        row.finished(Some(429), &outcome);
        assert_eq!(
            (row.status_text(), row.outcome_class()),
            ("! HTTP 429".to_string(), OutcomeClass::Http(429))
        );
        let done = OutcomeRecord {
            state: RecordedState::Completed,
            usage: Some(
                serde_json::json!({"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 7}),
            ),
            total_us: Some(5_000),
            ..OutcomeRecord::default()
        };
        row.stored(StoredDetails {
            session: 4,
            position: 2,
            model: Some("gpt-5.5".to_string()),
            client: Some("codex_exec".to_string()),
            status: Some(200),
            outcome: Some(done),
            started_us: Some(20),
            total_us: Some(6_000),
        });
        assert_eq!(
            (
                row.status_text(),
                row.input_tokens,
                row.cached_tokens,
                row.output_tokens,
                row.total_us,
                row.started_us,
                row.session,
                row.position,
                row.error.clone(),
            ),
            (
                "200 · completed".to_string(),
                Some(1200),
                Some(1024),
                Some(7),
                Some(6_000),
                20,
                Some(4),
                Some(2),
                None
            )
        );
        assert_eq!(
            row.haystack,
            "proxy\npost\nhttps://api.openai.com/v1/responses?key=<redacted>\ncodex_exec\ngpt-5.5\n200 · completed\n#4\n"
        );
    }
}
