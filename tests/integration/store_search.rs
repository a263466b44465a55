//! Session search reads the whole stored body, on real SQLite files: a tool name and a tool
//! description (top-level `tools`, stored as schema-3 pieces) of the seeded tool-calls sample,
//! top-level `instructions` with quotes (found as spelled inside JSON), a body kept verbatim,
//! and the `fields` of rows written before schema 3 (the schema-2 dump).

use crate::support::sample_har;

use crate::support::packed;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::store::seed::open_seeded;
use promptwire::store::{Page, Store};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("store_search-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join("promptwire.sqlite")
}

fn found(store: &Store, text: &str) -> Vec<String> {
    store
        .search_sessions(text, Page::ALL)
        .expect("search")
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn tool_names_descriptions_instructions_and_verbatim_bodies_are_found() {
    let path = scratch("seeded");
    let mut store = open_seeded(&path).expect("seeded");
    // Only in `tools` (pieces), never in an input item or an output text.
    assert_eq!(
        found(&store, "apply_patch"),
        ["cache-prefix-break", "tool-calls"]
    );
    assert_eq!(
        found(&store, "Run a shell command"),
        ["cache-prefix-break", "tool-calls"]
    );
    assert_eq!(
        found(&store, "run A SHELL command"),
        found(&store, "Run a shell command")
    );
    assert_eq!(
        found(&store, "no such text anywhere 7f3a"),
        Vec::<String>::new()
    );
    // LIKE wildcards in the text are literal.
    assert_eq!(found(&store, "apply%patch"), Vec::<String>::new());

    // Top-level instructions with quotes and a line break: stored JSON-escaped.
    let har = sample_har::variant("tool-calls.har", "with-instructions", |_, body, _| {
        body["instructions"] =
            Value::String("Answer \"briefly\".\nThen cite the file you read.".to_string());
    });
    store
        .import_har(&har, "with-instructions", Path::new("i.har"))
        .expect("import");
    assert_eq!(
        found(&store, "Answer \"briefly\".\nThen"),
        ["with-instructions"]
    );
    assert_eq!(
        found(&store, "cite the file you read"),
        ["with-instructions"]
    );

    // A body that is not a JSON object is kept verbatim, and searched there.
    let har = sample_har::variant("tool-calls.har", "verbatim", |_, _, _| {});
    let mut har: Value = serde_json::from_str(&har).expect("HAR");
    for entry in har["log"]["entries"].as_array_mut().expect("entries") {
        entry["request"]["postData"]["text"] =
            Value::String("[\"not an object\", \"needle-in-verbatim-body\"]".to_string());
    }
    store
        .import_har(&har.to_string(), "verbatim", Path::new("v.har"))
        .expect("import");
    assert_eq!(found(&store, "needle-in-verbatim-body"), ["verbatim"]);
}

#[test]
fn fields_of_rows_written_by_schema_2_are_found_once_migrated() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/store/schema2.sql");
    let dump = std::fs::read_to_string(&fixture).expect("the schema-2 dump");
    let path = scratch("schema2");
    rusqlite::Connection::open(&path)
        .and_then(|conn| conn.execute_batch(&dump))
        .expect("build the schema-2 file");
    let store = Store::open(&path).expect("open migrates");
    // The instructions lived in the old `fields` table only; migrated, they are one text.
    let holding = packed::texts(&path)
        .into_iter()
        .filter(|text| text.contains("release engineer"))
        .count();
    assert_eq!(holding, 1);
    let names = found(&store, "You are a release engineer");
    assert_eq!(names.len(), 1, "{names:?}");
    let all: Vec<String> = store
        .list_sessions(Page::ALL)
        .expect("list")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(all.contains(&names[0]));
    assert_eq!(found(&store, "Keep answers short and cite"), names);
}

#[test]
fn a_session_without_a_model_neither_fails_nor_hides_the_others() {
    use promptwire::store::{NewSession, Source};
    let path = scratch("no-model");
    let mut store = open_seeded(&path).expect("seeded");
    store
        .create_session(&NewSession {
            name: "model-less".to_string(),
            source: Source::Proxy,
            provider: None,
            model: None,
            created_us: 1,
        })
        .expect("session");
    // Neither its name nor its model matches: the NULL model used to fail every query.
    assert_eq!(
        found(&store, "apply_patch"),
        ["cache-prefix-break", "tool-calls"]
    );
    assert_eq!(found(&store, "model-less"), ["model-less"]);
    assert_eq!(found(&store, "nothing matches 5c1e"), Vec::<String>::new());
}
