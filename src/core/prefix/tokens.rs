//! Token counting with the o200k_base encoding (the encoding of the GPT-4o/GPT-5 model family),
//! through `tiktoken-rs`.

use tiktoken_rs::CoreBPE;

/// An o200k_base token counter. Cheap to copy; the encoding tables are loaded once per process
/// (a few hundred milliseconds the first time).
#[derive(Clone, Copy)]
pub struct Tokenizer {
    bpe: &'static CoreBPE,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokenizer(o200k_base)")
    }
}

impl Tokenizer {
    /// The o200k_base counter (loads the bundled tables on first use).
    pub fn o200k() -> Self {
        Self {
            bpe: tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Number of tokens in `text`, special-token markers counted as ordinary text.
    pub fn count(&self, text: &str) -> u64 {
        self.bpe.encode_ordinary(text).len() as u64
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::o200k()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_o200k_tokens() {
        let t = Tokenizer::o200k();
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        // Special markers in user text are plain text, never a control token.
        assert!(t.count("<|endoftext|>") > 1);
    }
}
