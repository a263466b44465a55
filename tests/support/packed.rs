//! Reads the store's packed columns (`src/store/codec.rs`) on their own, from the file format as
//! documented: tag 0 then the bytes, or tag 1 then one zstd frame without its 4-byte magic
//! number, made with the embedded dictionary `src/store/dict/promptwire-v1.zdict`.

/// The bytes a packed column holds.
pub fn unpack(packed: &[u8]) -> Vec<u8> {
    match packed.split_first() {
        Some((0, rest)) => rest.to_vec(),
        Some((1, body)) => {
            let frame = [&[0x28, 0xb5, 0x2f, 0xfd][..], body].concat();
            let dict = std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("src/store/dict/promptwire-v1.zdict"),
            )
            .expect("the v1 dictionary");
            let mut decoder =
                zstd::bulk::Decompressor::with_dictionary(&dict).expect("a decompressor");
            decoder
                .decompress(&frame, 1 << 30)
                .expect("a frame the dictionary reads")
        }
        other => panic!("unknown packed value {other:?}"),
    }
}

/// The texts of the `texts` table in id order, unpacked.
pub fn texts(path: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    let mut stmt = conn
        .prepare("SELECT data FROM texts ORDER BY id")
        .expect("prepare");
    stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
        .expect("query")
        .map(|blob| String::from_utf8(unpack(&blob.expect("row"))).expect("UTF-8"))
        .collect()
}
