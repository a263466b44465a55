//! Finding and reading rollout files: every `rollout-*.jsonl` under a folder, grouped by the
//! thread id in their names (a resume may continue a thread in a linked file), each read
//! read-only and bounded.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::error::{StoreError, StoreResult};

/// The thread id at the end of `rollout-<timestamp>-<thread id>.jsonl` (a UUID: 36 characters).
fn thread_of_file(path: &Path) -> Option<&str> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    (id.len() == 36 && id.chars().filter(|c| *c == '-').count() == 4).then_some(id)
}

/// Rollout files of one thread: a resumed thread may continue in a linked file (same thread id,
/// later timestamp), imported together as one session.
pub(super) struct ThreadFiles {
    /// Its files, in path (time) order.
    pub paths: Vec<PathBuf>,
}

/// Groups sorted paths by the thread id in their names, in order of each thread's first file.
pub(super) fn group_by_thread(files: Vec<PathBuf>) -> Vec<ThreadFiles> {
    let mut groups: Vec<ThreadFiles> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for path in files {
        let thread = thread_of_file(&path).map(str::to_string);
        match thread.as_ref().and_then(|t| index.get(t)) {
            Some(&i) => groups[i].paths.push(path),
            None => {
                if let Some(t) = thread {
                    index.insert(t, groups.len());
                }
                groups.push(ThreadFiles { paths: vec![path] });
            }
        }
    }
    groups
}

/// The files of one thread, one after the other (each bounded).
pub(super) fn read_group(paths: &[PathBuf], max_bytes: u64) -> StoreResult<Vec<u8>> {
    let mut bytes = Vec::new();
    for path in paths {
        if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        bytes.extend(read_bounded(path, max_bytes)?);
    }
    Ok(bytes)
}

/// Reads a file, refusing it past `max_bytes`.
pub(super) fn read_bounded(path: &Path, max_bytes: u64) -> StoreResult<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| StoreError::io(e, path.to_path_buf()))?;
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::io(e, path.to_path_buf()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(StoreError::BadImport {
            message: format!("larger than {max_bytes} bytes"),
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

/// Every `rollout-*.jsonl` under `dir`, sorted by path.
pub(super) fn rollout_files(dir: &Path) -> StoreResult<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| StoreError::io(e, folder.clone()))?;
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io(e, folder.clone()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| StoreError::io(e, path.clone()))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && name.starts_with("rollout-") && name.ends_with(".jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
