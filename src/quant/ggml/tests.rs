//! The codecs against ggml's own outputs, recorded by `scripts/gen_ggml_fixtures.py` in
//! `tests/fixtures/ggml` (`LOWBIT_GGML_FIXTURES` names another folder of the same files, e.g.
//! a larger recording).

use super::*;

fn fixture_dir() -> std::path::PathBuf {
    std::env::var_os("LOWBIT_GGML_FIXTURES")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ggml"))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u32(&mut self) -> usize {
        u32::from_le_bytes(self.take(4).try_into().unwrap()) as usize
    }
    fn floats(&mut self, n: usize) -> Vec<f32> {
        self.take(4 * n).chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
    }
}

/// (dequantized values, quantized bytes without / with an importance matrix) compared.
#[derive(Default, Debug)]
struct Counts {
    values: usize,
    plain_bytes: usize,
    imatrix_bytes: usize,
    failures: Vec<String>,
}

fn check(c: &Codec) -> Counts {
    let data = std::fs::read(fixture_dir().join(format!("{}.bin", c.name))).expect("the fixture file");
    let mut r = Reader(&data);
    let mut counts = Counts::default();
    let mut last_x: Vec<f32> = Vec::new();
    while !r.0.is_empty() {
        let kind = r.take(1)[0];
        let (rows, cols) = (r.u32(), r.u32());
        let n = rows * cols;
        match kind {
            0 => {
                let raw = r.take(n / c.block_elements * c.block_bytes);
                let want = r.floats(n);
                let mut got = vec![0f32; n];
                c.decode_blocks(raw, &mut got).unwrap();
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    if g.to_bits() != w.to_bits() && counts.failures.len() < 8 {
                        counts.failures.push(format!(
                            "dequantize block {} element {}: {:#010x}, ggml {:#010x}",
                            i / c.block_elements,
                            i % c.block_elements,
                            g.to_bits(),
                            w.to_bits()
                        ));
                    }
                }
                counts.values += n;
            }
            1 | 2 => {
                let imatrix = if kind == 1 {
                    last_x = r.floats(n);
                    None
                } else {
                    Some(r.floats(cols))
                };
                let want = r.take(n / c.block_elements * c.block_bytes);
                let got = c.quantize_rows(&last_x, cols, imatrix.as_deref()).unwrap();
                let row_bytes = cols / c.block_elements * c.block_bytes;
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    if g != w && counts.failures.len() < 8 {
                        counts.failures.push(format!(
                            "quantize{} row {} byte {}: {g:#04x}, ggml {w:#04x}",
                            if kind == 2 { " (imatrix)" } else { "" },
                            i / row_bytes,
                            i % row_bytes
                        ));
                    }
                }
                if kind == 1 {
                    counts.plain_bytes += want.len();
                } else {
                    counts.imatrix_bytes += want.len();
                }
            }
            k => panic!("record kind {k}"),
        }
    }
    counts
}

#[test]
fn codecs_match_ggml() {
    let mut bad = Vec::new();
    let mut compared = 0;
    // The I-quants are checked on their own recordings (tests/fixtures/ggml_iquants) by the tests
    // in iquants.rs; every other codec must have a fixture here.
    let elsewhere = |name: &str| super::iquants::CODECS.iter().any(|c| c.name == name);
    for c in codecs().filter(|c| !elsewhere(c.name)) {
        if !fixture_dir().join(format!("{}.bin", c.name)).exists() {
            bad.push(format!("{}: no fixture", c.name));
            continue;
        }
        let counts = check(c);
        eprintln!(
            "{}: {} values, {} bytes, {} bytes with imatrix",
            c.name, counts.values, counts.plain_bytes, counts.imatrix_bytes
        );
        assert!(counts.values > 0 && counts.plain_bytes > 0, "{}: nothing compared", c.name);
        compared += counts.values;
        for f in counts.failures {
            bad.push(format!("{}: {f}", c.name));
        }
    }
    assert!(compared > 0);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn nearest_int_as_the_bit_trick() {
    use arith::nearest_int;
    assert_eq!(nearest_int(2.5), 2);
    assert_eq!(nearest_int(-2.5), -2);
    assert_eq!(nearest_int(3.5), 4);
}
