//! The limits on what comes back, as the app's settings hold them: size of one event and of a
//! whole answer, the idle timeout, the overall deadline of a send and its retries. Send,
//! Re-send and the recording proxy all use them; the CLI has the same as flags.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::core::stream::StreamLimits;
use crate::core::stream::limits::{DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES};
use crate::transport::{ProxyOptions, SendOptions};

const MIB: u64 = 1024 * 1024;

/// Limits applied to sends and to recordings through the proxy (persisted in the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Largest event, in MiB.
    pub max_event_mib: u64,
    /// Largest answer, in MiB.
    pub max_response_mib: u64,
    /// Longest wait for the answer's head and then for each chunk, in seconds.
    pub idle_timeout_secs: u64,
    /// Longest a whole send may take, retries included, in minutes.
    pub deadline_mins: u64,
    /// Retries after the first attempt.
    pub max_retries: u32,
}

impl Default for Limits {
    fn default() -> Self {
        let send = SendOptions::default();
        Self {
            max_event_mib: DEFAULT_MAX_EVENT_BYTES / MIB,
            max_response_mib: DEFAULT_MAX_RESPONSE_BYTES / MIB,
            idle_timeout_secs: send.idle_timeout.as_secs(),
            deadline_mins: send.deadline.as_secs() / 60,
            max_retries: send.max_retries,
        }
    }
}

impl Limits {
    /// Allowed range of each size, in MiB.
    pub const MIB_RANGE: std::ops::RangeInclusive<u64> = 1..=64 * 1024;
    /// Allowed range of the idle timeout, in seconds.
    pub const IDLE_RANGE: std::ops::RangeInclusive<u64> = 1..=24 * 3600;
    /// Allowed range of the deadline, in minutes.
    pub const DEADLINE_RANGE: std::ops::RangeInclusive<u64> = 1..=7 * 24 * 60;
    /// Allowed range of the retries.
    pub const RETRY_RANGE: std::ops::RangeInclusive<u32> = 0..=20;

    /// The limits brought into their allowed ranges (settings files can hold anything).
    pub fn clamped(self) -> Self {
        let clamp = |v: u64, r: &std::ops::RangeInclusive<u64>| v.clamp(*r.start(), *r.end());
        Self {
            max_event_mib: clamp(self.max_event_mib, &Self::MIB_RANGE),
            max_response_mib: clamp(self.max_response_mib, &Self::MIB_RANGE),
            idle_timeout_secs: clamp(self.idle_timeout_secs, &Self::IDLE_RANGE),
            deadline_mins: clamp(self.deadline_mins, &Self::DEADLINE_RANGE),
            max_retries: self
                .max_retries
                .clamp(*Self::RETRY_RANGE.start(), *Self::RETRY_RANGE.end()),
        }
    }

    /// The size limits a stream is read under.
    pub fn stream(&self) -> StreamLimits {
        let c = self.clamped();
        StreamLimits {
            max_event_bytes: c.max_event_mib * MIB,
            max_response_bytes: c.max_response_mib * MIB,
        }
    }

    /// The options a send runs under.
    pub fn send_options(&self) -> SendOptions {
        let c = self.clamped();
        SendOptions {
            idle_timeout: Duration::from_secs(c.idle_timeout_secs),
            max_retries: c.max_retries,
            deadline: Duration::from_secs(c.deadline_mins * 60),
            limits: self.stream(),
            // The timeline keeps the events it shows; a second copy in the attempt is unused.
            keep_entries: false,
            ..SendOptions::default()
        }
    }

    /// Applies the limits that concern a recording proxy (sizes, idle timeout).
    pub fn apply_to_proxy(&self, options: &mut ProxyOptions) {
        options.limits = self.stream();
        options.idle_timeout = Duration::from_secs(self.clamped().idle_timeout_secs);
    }

    /// One line for the panels: "64 MiB per event · 1024 MiB per answer · idle 300 s · …".
    pub fn summary(&self) -> String {
        let c = self.clamped();
        format!(
            "{} MiB per event · {} MiB per answer · idle {} s · deadline {} min · {} retries",
            c.max_event_mib,
            c.max_response_mib,
            c.idle_timeout_secs,
            c.deadline_mins,
            c.max_retries
        )
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn defaults_are_the_cli_defaults() {
        let limits = Limits::default();
        assert_eq!(limits.stream(), StreamLimits::default());
        let send = limits.send_options();
        let default = SendOptions::default();
        assert_eq!(
            (
                send.idle_timeout,
                send.max_retries,
                send.deadline,
                send.limits
            ),
            (
                default.idle_timeout,
                default.max_retries,
                default.deadline,
                default.limits
            )
        );
        assert_eq!(
            limits.summary(),
            "64 MiB per event · 1024 MiB per answer · idle 300 s · deadline 30 min · 5 retries"
        );
    }

    #[test]
    fn settings_out_of_range_are_clamped() {
        let wild = Limits {
            max_event_mib: 0,
            max_response_mib: u64::MAX,
            idle_timeout_secs: 0,
            deadline_mins: u64::MAX,
            max_retries: 1000,
        };
        assert_eq!(
            wild.clamped(),
            Limits {
                max_event_mib: 1,
                max_response_mib: 64 * 1024,
                idle_timeout_secs: 1,
                deadline_mins: 7 * 24 * 60,
                max_retries: 20,
            }
        );
        // No overflow on the way to bytes.
        assert_eq!(
            wild.stream(),
            StreamLimits {
                max_event_bytes: MIB,
                max_response_bytes: 64 * 1024 * MIB,
            }
        );
        let parsed: Limits = serde_json::from_str(r#"{"max_retries": 2}"#).expect("partial");
        assert_eq!(
            parsed,
            Limits {
                max_retries: 2,
                ..Limits::default()
            }
        );
    }
}
