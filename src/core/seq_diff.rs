//! Sequence diffs that stay near-linear on large inputs: Myers (via `similar`) costs O(N·D), which
//! is quadratic when two long sequences differ throughout. [`diff_ops`] trims the common prefix
//! and suffix (linear) and runs Myers only when what is left is at most [`MAX_MYERS_ITEMS`] items;
//! a longer differing middle is reported whole as removed then added — a valid diff, not a
//! minimal one, computed in linear time. Deterministic (no clock, unlike a deadline).

use std::hash::Hash;

use similar::{Algorithm, DiffOp, capture_diff};

/// Largest differing middle (old plus new items) diffed with Myers.
pub const MAX_MYERS_ITEMS: usize = 8192;

/// The operations turning `old` into `new`, in order, with indices into the whole slices.
pub fn diff_ops<T: Hash + Eq + Ord>(old: &[T], new: &[T]) -> Vec<DiffOp> {
    let prefix = old.iter().zip(new).take_while(|(x, y)| x == y).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    if (old_end - prefix) + (new_end - prefix) <= MAX_MYERS_ITEMS {
        return capture_diff(Algorithm::Myers, old, 0..old.len(), new, 0..new.len());
    }
    let mut ops = Vec::with_capacity(4);
    if prefix > 0 {
        ops.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: prefix,
        });
    }
    ops.push(DiffOp::Delete {
        old_index: prefix,
        old_len: old_end - prefix,
        new_index: prefix,
    });
    ops.push(DiffOp::Insert {
        old_index: old_end,
        new_index: prefix,
        new_len: new_end - prefix,
    });
    if suffix > 0 {
        ops.push(DiffOp::Equal {
            old_index: old_end,
            new_index: new_end,
            len: suffix,
        });
    }
    ops.retain(|op| {
        !matches!(
            op,
            DiffOp::Delete { old_len: 0, .. } | DiffOp::Insert { new_len: 0, .. }
        )
    });
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use similar::capture_diff_slices;

    #[test]
    fn small_inputs_are_diffed_with_myers() {
        let old = [1, 2, 3, 4, 5];
        let new = [1, 3, 4, 9, 5];
        assert_eq!(
            diff_ops(&old, &new),
            capture_diff_slices(Algorithm::Myers, &old, &new)
        );
    }

    #[test]
    fn a_long_differing_middle_is_removed_then_added() {
        let old: Vec<u32> = (0..20_000).collect();
        let new: Vec<u32> = (0..20_000)
            .map(|i| {
                if (5..19_990).contains(&i) {
                    i + 100_000
                } else {
                    i
                }
            })
            .collect();
        assert_eq!(
            diff_ops(&old, &new),
            vec![
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 5
                },
                DiffOp::Delete {
                    old_index: 5,
                    old_len: 19_985,
                    new_index: 5
                },
                DiffOp::Insert {
                    old_index: 19_990,
                    new_index: 5,
                    new_len: 19_985
                },
                DiffOp::Equal {
                    old_index: 19_990,
                    new_index: 19_990,
                    len: 10
                },
            ]
        );
        // Only added at the end: no delete.
        let longer: Vec<u32> = (0..30_000).collect();
        let mut appended = longer.clone();
        appended.extend(100_000..110_000);
        assert_eq!(
            diff_ops(&longer, &appended),
            vec![
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 30_000
                },
                DiffOp::Insert {
                    old_index: 30_000,
                    new_index: 30_000,
                    new_len: 10_000
                },
            ]
        );
    }
}
