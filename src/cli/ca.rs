//! `--upstream-ca FILE` / `--ca FILE`: a PEM file of extra root certificates, read bounded
//! ([`MAX_CA_FILE_BYTES`]; a named pipe too) and parsed before anything connects, so a bad file
//! is one line naming it and exit status 1.

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::transport::tls::{ExtraRoots, MAX_CA_FILE_BYTES};

/// The roots in the PEM file at `path`.
pub fn read_ca_file(path: &Path) -> anyhow::Result<ExtraRoots> {
    let shown = path.display().to_string();
    let file =
        super::pipe::InputFile::open(path).with_context(|| format!("cannot read {shown}"))?;
    let Some(bytes) = super::input::read_capped(file, MAX_CA_FILE_BYTES)
        .with_context(|| format!("cannot read {shown}"))?
    else {
        bail!(
            "{shown} is larger than {}, too large for a PEM certificate file",
            super::input::human_size(MAX_CA_FILE_BYTES)
        );
    };
    Ok(ExtraRoots::from_pem(&bytes, &shown)?)
}
