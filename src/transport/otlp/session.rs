//! A stored session as spans: its facts read from the store, its prefix input and ledger (the
//! one ledger, `core::ledger`), mapped by `core::otel`. Used by `sessions export --otlp`, the
//! app's "Export to OpenTelemetry…" and the live export of `record --otlp`.

use crate::core::ledger::{self, Ledger, Rules};
use crate::core::otel::{
    RequestFacts, SessionFacts, Span, SpanOptions, request_spans, session_span,
};
use crate::core::prefix::Session;
use crate::core::redact::RedactError;
use crate::store::prefix_input::push_stored_session;
use crate::store::{Store, StoreError};

/// Why a session could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum SessionSpansError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Content could not be redacted: nothing of the session is exported.
    #[error("session {0}: content could not be redacted, nothing exported: {1}")]
    Redact(i64, RedactError),
}

/// A stored session read for export: its facts, and its ledger when it could be computed.
#[derive(Debug)]
pub struct SessionForExport {
    /// The session.
    pub session: SessionFacts,
    /// Its requests, in order.
    pub requests: Vec<RequestFacts>,
    /// Its ledger (`None` when its bodies are not a request the analysis accepts).
    pub ledger: Option<Ledger>,
    /// Why there is no ledger, when there is none.
    pub ledger_note: Option<String>,
}

impl SessionForExport {
    /// Reads session `id` (its content too when `options.content`) and computes its ledger.
    pub fn read(store: &Store, id: i64, options: SpanOptions) -> Result<Self, StoreError> {
        let (session, mut requests) = store.otel_facts(id, options.content)?;
        let mut prefix = Session::default();
        let (ledger, ledger_note) = match push_stored_session(&mut prefix, store, id) {
            Ok(()) if prefix.len() == requests.len() => {
                for (facts, request) in requests.iter_mut().zip(prefix.requests()) {
                    facts
                        .prompt_cache_key
                        .clone_from(&request.shape.prompt_cache_key);
                    facts.reasoning_effort = request
                        .shape
                        .header
                        .iter()
                        .find(|part| &*part.pointer == "/reasoning")
                        .and_then(|part| prefix.pool().value(part.id).get("effort"))
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string);
                }
                (Some(ledger::ledger(&prefix, &Rules::bundled())), None)
            }
            Ok(()) => (
                None,
                Some("the ledger does not cover every request".to_string()),
            ),
            Err(e) => (None, Some(e.to_string())),
        };
        Ok(Self {
            session,
            requests,
            ledger,
            ledger_note,
        })
    }

    /// The session's root span.
    pub fn root_span(&self) -> Span {
        session_span(&self.session, &self.requests, self.ledger.as_ref())
    }

    /// The spans of its requests (`only`: those with these stored ids).
    pub fn request_spans(
        &self,
        options: SpanOptions,
        only: Option<&[i64]>,
    ) -> Result<Vec<Span>, SessionSpansError> {
        request_spans(
            &self.session,
            &self.requests,
            self.ledger.as_ref(),
            options,
            only,
        )
        .map_err(|e| SessionSpansError::Redact(self.session.id, e))
    }

    /// Every span: the root first, then one per request.
    pub fn all_spans(&self, options: SpanOptions) -> Result<Vec<Span>, SessionSpansError> {
        let mut spans = vec![self.root_span()];
        spans.extend(self.request_spans(options, None)?);
        Ok(spans)
    }
}
