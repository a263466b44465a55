//! Extra root certificates for an upstream behind a private CA (a self-hosted or corporate
//! endpoint, a loopback test server): parsed once from PEM, checked to be usable trust anchors,
//! then added to the web's roots for reqwest (HTTP, HTTP/2 by ALPN) and for the WebSocket
//! relay's rustls connection. The file is read bounded ([`MAX_CA_FILE_BYTES`]): by the CLI
//! itself (a named pipe too), by the app through [`ExtraRoots::read_file`].

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

use crate::core::stream::limits::human_size;

/// Largest CA file read (a PEM bundle of every public CA is about 250 KiB).
pub const MAX_CA_FILE_BYTES: u64 = 1024 * 1024;

/// Why a CA certificate set cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaError {
    /// The PEM text is malformed.
    #[error("{source_name}: not a PEM certificate file ({reason})")]
    BadPem {
        /// Where it was read from (a file name).
        source_name: String,
        /// Why.
        reason: String,
    },
    /// It has no `CERTIFICATE` section.
    #[error("{source_name}: no PEM `CERTIFICATE` in it")]
    NoCertificate {
        /// Where it was read from.
        source_name: String,
    },
    /// A certificate cannot be a trust anchor (bad DER inside the armor).
    #[error("{source_name}: certificate {index} cannot be trusted as a root: {reason}")]
    BadCertificate {
        /// Where it was read from.
        source_name: String,
        /// Its place in the file, from 1.
        index: usize,
        /// Why.
        reason: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// The system's error.
        message: String,
    },
    /// The file is larger than [`MAX_CA_FILE_BYTES`].
    #[error("{path} is larger than {}, too large for a PEM certificate file", human_size(*limit))]
    TooLarge {
        /// The file.
        path: String,
        /// The limit.
        limit: u64,
    },
}

/// Root certificates trusted besides the web's (webpki) roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraRoots {
    certificates: Vec<CertificateDer<'static>>,
}

impl ExtraRoots {
    /// Parses the PEM text `pem` (one or more `CERTIFICATE` sections; other sections are
    /// ignored) read from `source_name`; every certificate must make a trust anchor.
    pub fn from_pem(pem: &[u8], source_name: &str) -> Result<Self, CaError> {
        let certificates = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| CaError::BadPem {
                source_name: source_name.to_string(),
                reason: pem_reason(&e),
            })?;
        if certificates.is_empty() {
            return Err(CaError::NoCertificate {
                source_name: source_name.to_string(),
            });
        }
        for (index, certificate) in certificates.iter().enumerate() {
            let mut store = rustls::RootCertStore::empty();
            store
                .add(certificate.clone())
                .map_err(|e| CaError::BadCertificate {
                    source_name: source_name.to_string(),
                    index: index + 1,
                    reason: match e {
                        rustls::Error::InvalidCertificate(why) => {
                            format!("not a valid X.509 certificate ({why:?})")
                        }
                        other => other.to_string(),
                    },
                })?;
        }
        Ok(Self { certificates })
    }

    /// The roots in the PEM file at `path`, read bounded ([`MAX_CA_FILE_BYTES`]) — for the
    /// app's Record panel (the CLI reads its own, a named pipe too). Blocking: call it off the
    /// async workers.
    pub fn read_file(path: &Path) -> Result<Self, CaError> {
        let shown = path.display().to_string();
        let unreadable = |e: std::io::Error| CaError::Unreadable {
            path: shown.clone(),
            message: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut bytes = Vec::new();
        file.take(MAX_CA_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > MAX_CA_FILE_BYTES {
            return Err(CaError::TooLarge {
                path: shown,
                limit: MAX_CA_FILE_BYTES,
            });
        }
        Self::from_pem(&bytes, &shown)
    }

    /// How many certificates it holds.
    pub fn len(&self) -> usize {
        self.certificates.len()
    }

    /// True when it holds none (never, for a parsed set).
    pub fn is_empty(&self) -> bool {
        self.certificates.is_empty()
    }

    /// `builder` trusting these roots too.
    pub(crate) fn add_to_reqwest(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, String> {
        for certificate in &self.certificates {
            let certificate =
                reqwest::Certificate::from_der(certificate).map_err(|e| e.to_string())?;
            builder = builder.add_root_certificate(certificate);
        }
        Ok(builder)
    }

    /// A rustls client configuration trusting the web's roots and these (no ALPN: the
    /// WebSocket handshake is HTTP/1.1), with the ring provider reqwest uses too.
    pub(crate) fn rustls_client_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for certificate in &self.certificates {
            roots.add(certificate.clone()).map_err(|e| e.to_string())?;
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// A PEM error in words (the crate's own text shows markers as byte lists).
fn pem_reason(error: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    match error {
        Error::MissingSectionEnd { end_marker } => {
            format!("no `-----END {}-----` line", text(end_marker))
        }
        Error::IllegalSectionStart { line } => {
            format!("bad `-----BEGIN` line `{}`", text(line).trim())
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CA: &[u8] = include_bytes!("../../tests/data/tls/ca.pem");

    #[test]
    fn a_ca_file_parses_and_builds_both_clients() {
        let roots = ExtraRoots::from_pem(CA, "ca.pem").expect("parse");
        assert_eq!(roots.len(), 1);
        let builder = roots
            .add_to_reqwest(reqwest::Client::builder())
            .expect("reqwest roots");
        builder.build().expect("client");
        roots.rustls_client_config().expect("rustls config");
    }

    #[test]
    fn bad_pem_is_named() {
        let bad = |pem: &[u8], name: &str| ExtraRoots::from_pem(pem, name).expect_err("bad PEM");
        let garbage = b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
        assert_eq!(
            [
                bad(b"just text\n", "a.pem"),
                bad(&CA[..CA.len() / 2], "cut.pem"),
                bad(garbage, "g.pem"),
            ],
            [
                CaError::NoCertificate {
                    source_name: "a.pem".to_string()
                },
                CaError::BadPem {
                    source_name: "cut.pem".to_string(),
                    reason: "no `-----END CERTIFICATE-----` line".to_string()
                },
                CaError::BadCertificate {
                    source_name: "g.pem".to_string(),
                    index: 1,
                    reason: "not a valid X.509 certificate (BadEncoding)".to_string()
                },
            ]
        );
    }
}
