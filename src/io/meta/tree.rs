//! Names in a tree from index arithmetic alone, so memory stays flat for
//! any number of files: leaf directory L is the D digits of L in base W
//! (`d3/d7`), file N of a leaf is `fN`, file index i = L x F + N, and a
//! file's size follows from a hash of its index.

use std::ffi::CStr;

use crate::spec::BlockSize;
use crate::spec::meta::MetaSpec;

/// Room for the longest name: 16 levels of `d99999/` plus `f999999999.r`.
pub(crate) const NAME_MAX: usize = 16 * 7 + 16;

/// A NUL-terminated name built in place (no allocation per operation).
pub(crate) struct Name {
    buf: [u8; NAME_MAX],
    len: usize,
}

impl Default for Name {
    fn default() -> Self {
        Self {
            buf: [0; NAME_MAX],
            len: 0,
        }
    }
}

impl Name {
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(NAME_MAX - 1 - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    pub(crate) fn push_num(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    pub(crate) fn as_cstr(&mut self) -> &CStr {
        self.buf[self.len] = 0;
        // The buffer holds digits, letters, '/' and '.', and a NUL just set.
        CStr::from_bytes_with_nul(&self.buf[..=self.len]).unwrap_or(c".")
    }

    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub(crate) depth: u32,
    pub(crate) width: u64,
    pub(crate) files_per_dir: u64,
    pub(crate) leaves: u64,
    sizes: Vec<u64>,
    /// Cumulative weights of `sizes`, for picking a size by hash.
    cumulative: Vec<u64>,
    seed: u64,
}

impl Tree {
    pub(crate) fn new(m: &MetaSpec, seed: u64) -> Self {
        let mut cumulative = Vec::with_capacity(m.file_size.len());
        let mut acc = 0u64;
        for BlockSize { weight, .. } in &m.file_size {
            acc += (*weight).max(1) as u64;
            cumulative.push(acc);
        }
        Self {
            depth: m.depth,
            width: m.width as u64,
            files_per_dir: m.files_per_dir as u64,
            leaves: m.leaves(),
            sizes: m.file_size.iter().map(|b| b.bytes).collect(),
            cumulative,
            seed,
        }
    }

    pub(crate) fn files(&self) -> u64 {
        self.leaves * self.files_per_dir
    }

    /// Writes leaf `leaf`'s path relative to the root (empty at depth 0).
    pub(crate) fn leaf_path(&self, leaf: u64, out: &mut Name) {
        out.clear();
        // The most significant digit first: divide by width^(levels left).
        let mut div = self.leaves / self.width.max(1);
        for level in 0..self.depth {
            if level > 0 {
                out.push(b"/");
            }
            out.push(b"d");
            out.push_num(leaf.checked_div(div).unwrap_or(0) % self.width.max(1));
            div /= self.width.max(1);
        }
    }

    /// The prefix of leaf `leaf`'s path down to `level` components (1..=depth).
    pub(crate) fn dir_path(&self, leaf: u64, level: u32, out: &mut Name) {
        self.leaf_path(leaf, out);
        let s = out.as_str();
        let cut = s
            .match_indices('/')
            .nth(level as usize - 1)
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        out.len = cut;
    }

    /// File `n` of a leaf: `fN`, or its rename partner `fN.r`.
    pub(crate) fn file_name(&self, n: u64, renamed: bool, out: &mut Name) {
        out.clear();
        out.push(b"f");
        out.push_num(n);
        if renamed {
            out.push(b".r");
        }
    }

    /// File index -> (leaf, number within the leaf).
    pub(crate) fn split(&self, file: u64) -> (u64, u64) {
        (file / self.files_per_dir, file % self.files_per_dir)
    }

    /// The size of file `file`: the same in every phase and on every host.
    pub(crate) fn size_of(&self, file: u64) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let total = self.cumulative.last().copied().unwrap_or(1);
        let pick = mix64(file ^ self.seed.rotate_left(17)) % total;
        let i = self.cumulative.partition_point(|&c| c <= pick);
        self.sizes.get(i).copied().unwrap_or(0)
    }
}

/// splitmix64's finaliser: a well-spread hash of an index.
pub(crate) fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The units (files or leaf directories) one worker owns: a contiguous
/// block of leaves (its own directories), or every n-th unit when threads
/// share directories.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Share {
    Range { start: u64, end: u64 },
    Stride { first: u64, step: u64, total: u64 },
}

impl Share {
    /// Worker `w` of `n`'s share of `units` units grouped `per_leaf` to a leaf.
    pub(crate) fn of(units: u64, per_leaf: u64, leaves: u64, w: u32, n: u32, shared: bool) -> Self {
        let (w, n) = (w as u64, n as u64);
        if shared {
            return Self::Stride {
                first: w,
                step: n,
                total: units,
            };
        }
        let l0 = leaves * w / n;
        let l1 = leaves * (w + 1) / n;
        Self::Range {
            start: l0 * per_leaf,
            end: l1 * per_leaf,
        }
    }

    pub(crate) fn len(&self) -> u64 {
        match *self {
            Self::Range { start, end } => end - start,
            Self::Stride { first, step, total } => {
                if first >= total {
                    0
                } else {
                    (total - first).div_ceil(step)
                }
            }
        }
    }

    /// The k-th unit of the share (k < len).
    pub(crate) fn nth(&self, k: u64) -> u64 {
        match *self {
            Self::Range { start, .. } => start + k,
            Self::Stride { first, step, .. } => first + k * step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::meta::{MetaOp, MetaOpWeight};

    fn tree(depth: u32, width: u32, files: u32, sizes: &[(u64, u32)]) -> Tree {
        let m = MetaSpec {
            depth,
            width,
            files_per_dir: files,
            file_size: sizes
                .iter()
                .map(|&(bytes, weight)| BlockSize { bytes, weight })
                .collect(),
            ops: vec![MetaOpWeight {
                op: MetaOp::Stat,
                weight: 1,
            }],
            whole_tree: true,
            shared_dirs: false,
            drop_caches: false,
            direct: false,
            host_part: false,
            keep_complete: false,
        };
        Tree::new(&m, 7)
    }

    #[test]
    fn leaf_paths_are_the_digits_in_base_width() {
        let t = tree(3, 10, 5, &[(0, 1)]);
        let mut n = Name::default();
        t.leaf_path(0, &mut n);
        assert_eq!(n.as_str(), "d0/d0/d0");
        t.leaf_path(437, &mut n);
        assert_eq!(n.as_str(), "d4/d3/d7");
        t.dir_path(437, 2, &mut n);
        assert_eq!(n.as_str(), "d4/d3");
        let t = tree(0, 10, 5, &[(0, 1)]);
        t.leaf_path(0, &mut n);
        assert_eq!(n.as_str(), "");
        t.file_name(42, true, &mut n);
        assert_eq!(n.as_cstr().to_str().unwrap(), "f42.r");
    }

    #[test]
    fn every_leaf_has_its_own_path() {
        let t = tree(2, 7, 1, &[(0, 1)]);
        let mut seen = std::collections::HashSet::new();
        let mut n = Name::default();
        for l in 0..t.leaves {
            t.leaf_path(l, &mut n);
            assert!(seen.insert(n.as_str().to_string()));
        }
        assert_eq!(seen.len(), 49);
    }

    #[test]
    fn shares_cover_every_unit_once() {
        for shared in [false, true] {
            for n in [1u32, 3, 8] {
                let mut seen = vec![0u8; 2000];
                for w in 0..n {
                    let s = Share::of(2000, 20, 100, w, n, shared);
                    for k in 0..s.len() {
                        seen[s.nth(k) as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "shared={shared} n={n}");
            }
        }
    }

    #[test]
    fn sizes_follow_the_weights() {
        let t = tree(1, 10, 10_000, &[(3072, 50), (65536, 40), (1 << 20, 10)]);
        let mut counts = [0u64; 3];
        for i in 0..100_000 {
            match t.size_of(i) {
                3072 => counts[0] += 1,
                65536 => counts[1] += 1,
                _ => counts[2] += 1,
            }
        }
        assert!((counts[0] as f64 / 1000.0 - 50.0).abs() < 1.0, "{counts:?}");
        assert!((counts[2] as f64 / 1000.0 - 10.0).abs() < 1.0, "{counts:?}");
    }
}
