//! Benchmark: prefix analysis of a generated 1,000-request session whose last body is about
//! 2 MB (about 1 GB of bodies in all). Target: ≤ 1 s and ≤ 200 MB peak memory for the whole
//! analysis — every distinct item hashed, serialized and tokenized once, then pairs compared as
//! lists of element ids. Peak memory: `examples/prefix_memory.rs` under `/usr/bin/time -v`.

use criterion::{Criterion, criterion_group, criterion_main};
use promptwire::core::prefix::{PriceTable, RequestMeta, Session, Tokenizer};

#[path = "support/prefix_session.rs"]
mod prefix_session;

fn analyze(synthetic: &prefix_session::SyntheticSession, prices: &PriceTable) -> usize {
    let mut session = Session::new(Tokenizer::o200k());
    let ids: Vec<_> = synthetic
        .items
        .iter()
        .map(|item| session.intern_item(item))
        .collect();
    for (head, items) in &synthetic.requests {
        let head = &synthetic.heads[*head];
        let input: Vec<_> = items.iter().map(|i| ids[*i as usize]).collect();
        session
            .push_parts(head, &input, RequestMeta::default())
            .expect("valid request");
    }
    let report = session.report(prices);
    report.summary.breaks
}

fn bench(c: &mut Criterion) {
    let synthetic = prefix_session::generate();
    let prices = PriceTable::bundled();
    eprintln!(
        "session: {} requests, {} distinct items, last body {} bytes",
        synthetic.requests.len(),
        synthetic.items.len(),
        synthetic.body_bytes(synthetic.requests.len() - 1)
    );
    // Load the tokenizer tables outside the measurement (a one-time cost per process).
    let _ = Tokenizer::o200k().count("warm up");
    assert_eq!(analyze(&synthetic, &prices), 3);
    let mut group = c.benchmark_group("prefix");
    group.sample_size(10);
    group.bench_function("analyze_1000_requests_2MB", |b| {
        b.iter(|| analyze(&synthetic, &prices))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
