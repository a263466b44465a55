//! Number formatting shared by the views (the app's diff lines, the Sessions view) and the CLI:
//! thousands separated by commas, counts with their noun in the right number.

/// `n` and a noun, singular for one (`1 request`, `2 requests`, `0 errors`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `n` with thousands separated by commas (`12,345`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        let got: Vec<String> = [0, 999, 1000, 12_345, 1_234_567].map(super::grouped).into();
        assert_eq!(got, ["0", "999", "1,000", "12,345", "1,234,567"]);
    }
}
