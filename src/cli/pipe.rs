//! Opening an input file that may be a named pipe (FIFO): opened non-blocking, so a FIFO that no
//! program writes to cannot hang the command in `open`. A writer that comes within
//! [`WRITER_WAIT`] is read as before (blocking reads are emulated by short waits); a FIFO that
//! nothing is written to by then is an error naming it. Regular files and devices read as usual.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a named pipe may stay without anything written to it before the read gives up.
pub const WRITER_WAIT: Duration = Duration::from_secs(2);

/// The pause between two reads of a named pipe that has nothing for us yet.
const POLL: Duration = Duration::from_millis(10);

/// A file opened for reading that never blocks in `open` (see the module documentation).
pub struct InputFile {
    file: File,
    /// Set for a named pipe: when it was opened, and whether anything was read from it yet.
    pipe: Option<(Instant, bool)>,
    shown: String,
}

impl InputFile {
    /// Opens `path` for reading (a named pipe non-blocking).
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.custom_flags(libc::O_NONBLOCK);
        }
        let file = options.open(path)?;
        let meta = file.metadata()?;
        #[cfg(unix)]
        let is_pipe = {
            use std::os::unix::fs::FileTypeExt as _;
            meta.file_type().is_fifo()
        };
        #[cfg(not(unix))]
        let is_pipe = {
            let _ = meta;
            false
        };
        Ok(Self {
            file,
            pipe: is_pipe.then(|| (Instant::now(), false)),
            shown: path.display().to_string(),
        })
    }

    /// The open file's metadata.
    pub fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.file.metadata()
    }
}

impl Read for InputFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read(buf) {
                Ok(0) if buf.is_empty() => return Ok(0),
                // A named pipe reads as ended while no writer has it open: before anything
                // arrived, that is a writer still to come (or none at all).
                Ok(0) => match &self.pipe {
                    Some((opened, false)) if opened.elapsed() < WRITER_WAIT => {
                        std::thread::sleep(POLL);
                    }
                    Some((_, false)) => {
                        return Err(io::Error::other(format!(
                            "{} is a named pipe that nothing was written to within {} s (no writer)",
                            self.shown,
                            WRITER_WAIT.as_secs()
                        )));
                    }
                    _ => return Ok(0),
                },
                Ok(n) => {
                    if let Some((_, read)) = &mut self.pipe {
                        *read = true;
                    }
                    return Ok(n);
                }
                // Non-blocking: a writer is there but has nothing yet.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
                Err(e) => return Err(e),
            }
        }
    }
}
