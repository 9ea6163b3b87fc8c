//! The checkpoint file layer: hand-built safetensors and GGUF files read back with the values
//! put in them, files written by lowbit read back, and every bad-file case of the format answered
//! by `Error::Checkpoint` naming the tensor and the byte.

#![cfg(feature = "checkpoint")]

use lowbit::checkpoint::{
    parse_bytes, write_gguf, write_safetensors, Checkpoint, Container, GgmlType, GgufTensor, GgufValue,
    SafetensorsTensor, StoredType,
};
use lowbit::{DType, Error};
use std::path::Path;

/// A safetensors file: the 8-byte little-endian header length, the header, the data.
fn safetensors_file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

/// The parts of a `Error::Checkpoint`, or a panic naming what came instead.
fn refusal(bytes: &[u8]) -> (Option<Box<str>>, Option<u64>, Box<str>) {
    match parse_bytes(bytes) {
        Err(Error::Checkpoint { tensor, offset, message, .. }) => (tensor, offset, message),
        other => panic!("expected a checkpoint error, got {other:?}"),
    }
}

#[test]
fn a_hand_built_safetensors_file_reads_back() {
    // 1.0 and -1.0 as FLOAT8E4M3FN (0x38, 0xB8); four E2M1 codes 1, 2, 3, 4 two per byte, low
    // nibble first: 0x21, 0x43; a float32 1.5 = 0x3FC00000.
    let header = r#"{"__metadata__":{"format":"pt"},"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]},"q":{"dtype":"F4","shape":[2,2],"data_offsets":[2,4]},"s":{"dtype":"F32","shape":[],"data_offsets":[4,8]}}"#;
    let bytes = safetensors_file(header, &[0x38, 0xB8, 0x21, 0x43, 0x00, 0x00, 0xC0, 0x3F]);
    let (container, tensors) = parse_bytes(&bytes).unwrap();
    assert_eq!(container, Container::Safetensors);
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["w", "q", "s"]);
    assert_eq!(tensors[0].stored, StoredType::Plain(DType::Float8E4M3FN));
    assert_eq!(tensors[1].stored, StoredType::Plain(DType::Float4E2M1));
    assert_eq!(tensors[1].shape, [2, 2]);
    assert_eq!(tensors[2].shape, Vec::<usize>::new());
    let data_start = 8 + header.len() as u64;
    assert_eq!((tensors[1].offset, tensors[1].len), (data_start + 2, 2));
    assert_eq!((tensors[2].offset, tensors[2].len), (data_start + 4, 4));
}

#[test]
fn every_safetensors_dtype_has_a_lowbit_dtype() {
    let cases = [
        ("BOOL", DType::Bool, 8),
        ("U8", DType::Uint8, 8),
        ("I8", DType::Int8, 8),
        ("U16", DType::Uint16, 16),
        ("I16", DType::Int16, 16),
        ("U32", DType::Uint32, 32),
        ("I32", DType::Int32, 32),
        ("U64", DType::Uint64, 64),
        ("I64", DType::Int64, 64),
        ("F16", DType::Float16, 16),
        ("BF16", DType::Bfloat16, 16),
        ("F32", DType::Float, 32),
        ("F64", DType::Double, 64),
        ("C64", DType::Complex64, 64),
        ("F8_E5M2", DType::Float8E5M2, 8),
        ("F8_E4M3", DType::Float8E4M3FN, 8),
        ("F8_E8M0", DType::Float8E8M0, 8),
        ("F8_E4M3FNUZ", DType::Float8E4M3FNUZ, 8),
        ("F8_E5M2FNUZ", DType::Float8E5M2FNUZ, 8),
        ("F4", DType::Float4E2M1, 4),
        ("F6_E2M3", DType::Float6E2M3, 6),
        ("F6_E3M2", DType::Float6E3M2, 6),
    ];
    for (name, dtype, bits) in cases {
        // Four elements: a whole number of bytes for every width.
        let bytes = 4 * bits / 8;
        let header = format!(r#"{{"t":{{"dtype":"{name}","shape":[4],"data_offsets":[0,{bytes}]}}}}"#);
        let (_, tensors) = parse_bytes(&safetensors_file(&header, &vec![0; bytes])).unwrap();
        assert_eq!(tensors[0].stored, StoredType::Plain(dtype), "{name}");
    }
}

#[test]
fn damaged_safetensors_files_are_refused_with_tensor_and_byte() {
    // Header length past the file, and over the format's 100 MB.
    let mut short = 1000u64.to_le_bytes().to_vec();
    short.extend_from_slice(b"{}");
    let (_, offset, message) = refusal(&short);
    assert_eq!(offset, Some(0));
    assert!(message.contains("runs past the end of the file (10 bytes)"), "{message}");
    let (_, _, message) = refusal(&200_000_000u64.to_le_bytes());
    assert!(message.contains("over the 100000000 bytes"), "{message}");
    assert!(refusal(&[1, 2, 3]).2.contains("shorter than the 8-byte header length"));

    // Invalid JSON: the byte where the parser stopped (the header starts at byte 8).
    let (_, offset, message) = refusal(&safetensors_file(r#"{"t": }"#, &[]));
    assert_eq!(offset, Some(8 + 6), "{message}");
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(refusal(&safetensors_file(&deep, &[])).2.contains("nested more than 32 levels"));

    // A name given twice (the JSON parser would keep the last one silently).
    let twice =
        r#"{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    assert!(refusal(&safetensors_file(twice, &[7])).2.contains("\"t\" is given twice"));

    let entry = |name: &str, dtype: &str, shape: &str, start: u64, end: u64| {
        format!(r#""{name}":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[{start},{end}]}}"#)
    };
    let file = |entries: &[String], data: usize| {
        let header = format!("{{{}}}", entries.join(","));
        let start = 8 + header.len() as u64;
        (safetensors_file(&header, &vec![0; data]), start)
    };
    // Offsets past the data.
    let (bytes, start) = file(&[entry("a", "F32", "[2]", 0, 8)], 4);
    let (tensor, offset, message) = refusal(&bytes);
    assert_eq!((tensor.as_deref(), offset), (Some("\"a\""), Some(start + 4)));
    assert!(message.contains("need 8 bytes of data, but the file holds 4"), "{message}");
    // Overlapping tensors.
    let (bytes, start) = file(&[entry("a", "F32", "[1]", 0, 4), entry("b", "F32", "[1]", 2, 6)], 6);
    let (tensor, offset, message) = refusal(&bytes);
    assert_eq!((tensor.as_deref(), offset), (Some("\"b\""), Some(start + 2)));
    assert!(message.contains("overlap the tensor before (which ends at 4)"), "{message}");
    // A hole.
    let (bytes, start) = file(&[entry("a", "F32", "[1]", 0, 4), entry("b", "F32", "[1]", 8, 12)], 12);
    let (tensor, offset, message) = refusal(&bytes);
    assert_eq!((tensor.as_deref(), offset), (Some("\"b\""), Some(start + 8)));
    assert!(message.contains("bytes 4..8 of the data belong to no tensor"), "{message}");
    // Bytes after the last tensor.
    let (bytes, _) = file(&[entry("a", "U8", "[1]", 0, 1)], 3);
    assert!(refusal(&bytes).2.contains("2 bytes after the last tensor"));
    // dtype x shape against the byte count.
    let (bytes, start) = file(&[entry("a", "F32", "[3]", 0, 8)], 8);
    let (tensor, offset, message) = refusal(&bytes);
    assert_eq!((tensor.as_deref(), offset), (Some("\"a\""), Some(start)));
    assert!(message.contains("need 12 bytes, but data_offsets [0, 8] hold 8"), "{message}");
    // A shape whose element count overflows.
    let (bytes, _) = file(&[entry("a", "U8", "[4294967296, 4294967296]", 0, 1)], 1);
    assert!(refusal(&bytes).2.contains("more elements than fit in memory"));
    // Sub-byte elements that are not whole bytes.
    let (bytes, _) = file(&[entry("a", "F4", "[3]", 0, 2)], 2);
    assert!(refusal(&bytes).2.contains("3 elements of F4 (4 bits each) are not a whole number of bytes"));
    let (bytes, _) = file(&[entry("a", "F6_E2M3", "[2]", 0, 2)], 2);
    assert!(refusal(&bytes).2.contains("(6 bits each) are not a whole number of bytes"));
    // An unknown dtype.
    let (bytes, _) = file(&[entry("a", "F7", "[1]", 0, 1)], 1);
    let (tensor, _, message) = refusal(&bytes);
    assert_eq!(tensor.as_deref(), Some("\"a\""));
    assert!(message.contains("unknown dtype \"F7\""), "{message}");
}

/// A GGUF file built field by field.
#[derive(Default)]
struct Gguf(Vec<u8>);

impl Gguf {
    fn start(tensors: u64, kvs: u64) -> Gguf {
        let mut g = Gguf(b"GGUF".to_vec());
        g.u32(3).u64(tensors).u64(kvs);
        g
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    /// A tensor info: name, dims innermost first, ggml type id, offset.
    fn info(&mut self, name: &str, dims: &[u64], type_id: u32, offset: u64) -> &mut Self {
        self.string(name).u32(dims.len() as u32);
        for &d in dims {
            self.u64(d);
        }
        self.u32(type_id).u64(offset)
    }
    fn pad(&mut self, alignment: usize) -> &mut Self {
        self.0.resize(self.0.len().next_multiple_of(alignment), 0);
        self
    }
}

#[test]
fn a_hand_built_gguf_file_reads_back() {
    // One key (general.alignment = 32), a Q8_0 tensor of 2 x 32 elements (2 blocks of 34 bytes)
    // and an F32 tensor of 3 elements, padded to 32 after the first.
    let mut g = Gguf::start(2, 1);
    g.string("general.alignment").u32(4).u32(32);
    g.info("blk.0.weight", &[32, 2], 8, 0).info("norm", &[3], 0, 96);
    let header_end = g.0.len();
    g.pad(32);
    let data_start = g.0.len() as u64;
    g.0.extend(std::iter::repeat_n(0x11, 68));
    g.pad(32);
    g.0.extend_from_slice(&[0; 12]);
    let (container, tensors) = parse_bytes(&g.0).unwrap();
    assert_eq!(container, Container::Gguf);
    assert!(header_end as u64 <= data_start);
    assert_eq!(tensors[0].stored, StoredType::Ggml(GgmlType::from_name("Q8_0").unwrap()));
    // numpy order: the innermost dimension (32) last.
    assert_eq!(tensors[0].shape, [2, 32]);
    assert_eq!((tensors[0].offset, tensors[0].len), (data_start, 68));
    assert_eq!(tensors[1].stored, StoredType::Plain(DType::Float));
    assert_eq!((tensors[1].offset, tensors[1].len), (data_start + 96, 12));
}

#[test]
fn ggml_types_are_known_by_id_and_name() {
    // ids and block sizes from gguf-py 0.19.0 (GGMLQuantizationType, GGML_QUANT_SIZES).
    for (name, id, block) in [
        ("F32", 0, (1, 4)),
        ("F16", 1, (1, 2)),
        ("Q4_0", 2, (32, 18)),
        ("Q8_0", 8, (32, 34)),
        ("Q4_K", 12, (256, 144)),
        ("BF16", 30, (1, 2)),
        ("MXFP4", 39, (32, 17)),
        ("NVFP4", 40, (64, 36)),
    ] {
        let t = GgmlType::from_id(id).unwrap();
        assert_eq!((t.name(), t.block()), (name, block));
        assert_eq!(GgmlType::from_name(name), Some(t));
    }
    // Q8_1: ggml's block_q8_1 and ggml_type_size (ggml-py 0.10.1) are 36 bytes; gguf-py says 40.
    assert_eq!(GgmlType::from_name("Q8_1").unwrap().block(), (32, 36));
    // Decoded by quant::ggml's table of block types; Q8_1 has no dequantize in ggml.
    assert!(GgmlType::from_name("Q4_K").unwrap().is_decoded());
    assert!(!GgmlType::from_name("Q8_1").unwrap().is_decoded());
    assert!(GgmlType::from_id(4).is_none(), "4 (Q4_2) was removed from ggml");
}

#[test]
fn damaged_gguf_files_are_refused_with_tensor_and_byte() {
    // Counts the file cannot hold: checked before anything is allocated for them.
    let (_, offset, message) = refusal(&Gguf::start(1 << 60, 0).0);
    assert_eq!(offset, Some(8));
    assert!(message.contains("the tensor count 1152921504606846976 cannot fit"), "{message}");
    let (_, offset, message) = refusal(&Gguf::start(0, u64::MAX).0);
    assert_eq!(offset, Some(16));
    assert!(message.contains("key/value count"), "{message}");
    // A string length past the end.
    let mut g = Gguf::start(0, 1);
    g.u64(1 << 40).u64(0).u64(0);
    let (_, offset, message) = refusal(&g.0);
    assert_eq!(offset, Some(24));
    assert!(message.contains("a key 1099511627776 cannot fit"), "{message}");
    // An array count past the end.
    let mut g = Gguf::start(0, 1);
    g.string("k").u32(9).u32(4).u64(1 << 50);
    assert!(refusal(&g.0).2.contains("an array's item count 1125899906842624 cannot fit"));
    // Alignment: not a power of two; or so large that the data would start past the end.
    let mut g = Gguf::start(0, 1);
    g.string("general.alignment").u32(4).u32(3);
    assert!(refusal(&g.0).2.contains("general.alignment must be a UINT32 power of two, not 3"));
    let mut g = Gguf::start(1, 1);
    g.string("general.alignment").u32(4).u32(1 << 31);
    g.info("t", &[1], 0, 0);
    assert!(refusal(&g.0).2.contains("past the end of the file"));
    // A repeated key.
    let mut g = Gguf::start(0, 2);
    g.string("a").u32(4).u32(1).string("a").u32(4).u32(2);
    assert!(refusal(&g.0).2.contains("the key \"a\" is given twice"));
    // Unknown value type, unknown ggml type, too many dimensions, a wrong offset, truncated data.
    let mut g = Gguf::start(0, 1);
    g.string("a").u32(13);
    assert!(refusal(&g.0).2.contains("unknown value type 13"));
    let mut g = Gguf::start(1, 0);
    g.info("t", &[32], 4, 0);
    let (tensor, _, message) = refusal(&g.0);
    assert_eq!(tensor.as_deref(), Some("\"t\""));
    assert!(message.contains("unknown ggml type id 4"), "{message}");
    let mut g = Gguf::start(1, 0);
    g.info("t", &[1, 1, 1, 1, 1], 0, 0);
    assert!(refusal(&g.0).2.contains("5 dimensions; ggml tensors have at most 4"));
    let mut g = Gguf::start(1, 0);
    g.info("t", &[31], 8, 0);
    assert!(refusal(&g.0).2.contains("Q8_0 blocks hold 32 elements, but the innermost dimension is 31"));
    let mut g = Gguf::start(1, 0);
    g.info("t", &[4], 0, 32);
    g.pad(32).0.extend_from_slice(&[0; 64]);
    assert!(refusal(&g.0).2.contains("data offset is 32, but ggml's layout puts it at 0"));
    let mut g = Gguf::start(1, 0);
    g.info("t", &[8], 0, 0);
    g.pad(32).0.extend_from_slice(&[0; 20]);
    let (tensor, _, message) = refusal(&g.0);
    assert_eq!(tensor.as_deref(), Some("\"t\""));
    assert!(message.contains("run past the end of the file") && message.contains("truncated"), "{message}");
    // Element counts beyond int64.
    let mut g = Gguf::start(1, 0);
    g.info("t", &[1 << 40, 1 << 40], 0, 0);
    assert!(refusal(&g.0).2.contains("more elements than ggml can count"));
}

/// Writes a tensor's bytes in a writer's `fill`.
fn put(out: &mut dyn std::io::Write, bytes: &[u8]) -> lowbit::Result<()> {
    out.write_all(bytes).map_err(|e| Error::io(Path::new("test output"), e))
}

fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn written_files_read_back_and_failures_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.safetensors");
    let tensors = [
        SafetensorsTensor { name: "b".into(), dtype: DType::Bfloat16, shape: vec![2] },
        SafetensorsTensor { name: "a".into(), dtype: DType::Float4E2M1, shape: vec![1, 4] },
    ];
    let data: [&[u8]; 2] = [&[0x80, 0x3F, 0x00, 0xC0], &[0x21, 0x43]];
    let metadata = [("format".to_string(), "pt".to_string())];
    write_safetensors(&path, &tensors, &metadata, |k, out| put(out, data[k])).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    assert_eq!(ckpt.metadata(), &metadata);
    for (t, bytes) in tensors.iter().zip(data) {
        let stored = ckpt.tensor(&t.name).unwrap();
        assert_eq!((stored.stored, &stored.shape), (StoredType::Plain(t.dtype), &t.shape));
        assert_eq!(ckpt.bytes(stored), bytes);
        let mut piece = vec![0; bytes.len() - 1];
        ckpt.read_at(stored, 1, &mut piece).unwrap();
        assert_eq!(piece, bytes[1..]);
    }
    // A fill that fails, or writes the wrong byte count: an error, and no file (nor temporary).
    let failed = dir.path().join("failed.safetensors");
    let e = write_safetensors(&failed, &tensors, &[], |k, out| {
        if k == 1 {
            return Err(Error::TooLarge { what: "stop".into() });
        }
        put(out, data[k])
    });
    assert!(matches!(e, Err(Error::TooLarge { .. })), "{e:?}");
    let e = write_safetensors(&failed, &tensors, &[], |_, out| put(out, &[1]));
    assert!(e.unwrap_err().to_string().contains("1 bytes were written for a tensor of 4 bytes"));
    assert_eq!(list(dir.path()), ["out.safetensors"]);
    // No safetensors dtype for INT4, and a tensor name given twice.
    let int4 = [SafetensorsTensor { name: "x".into(), dtype: DType::Int4, shape: vec![2] }];
    assert!(write_safetensors(&failed, &int4, &[], |_, _| Ok(()))
        .unwrap_err()
        .to_string()
        .contains("INT4 has no safetensors dtype"));

    // GGUF: one Q4_0 tensor of 64 elements and one F16 of 3, alignment 64.
    let path = dir.path().join("out.gguf");
    let q4_0 = GgmlType::from_name("Q4_0").unwrap();
    let f16 = GgmlType::from_name("F16").unwrap();
    let tensors = [
        GgufTensor { name: "w".into(), ggml: q4_0, shape: vec![64] },
        GgufTensor { name: "n".into(), ggml: f16, shape: vec![3, 1] },
    ];
    let blocks: Vec<u8> = (0..36).collect();
    let halves = [0x00, 0x3C, 0x00, 0x40, 0x00, 0xBC];
    let metadata = [
        ("general.architecture".to_string(), GgufValue::String(b"llama".to_vec())),
        ("list".to_string(), GgufValue::Array(vec![GgufValue::I32(-1), GgufValue::I32(2)])),
    ];
    write_gguf(&path, &tensors, &metadata, 64, |k, out| put(out, if k == 0 { &blocks } else { &halves })).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    assert_eq!((ckpt.container(), ckpt.gguf_alignment()), (Container::Gguf, 64));
    assert_eq!(&ckpt.gguf_metadata()[..2], &metadata);
    assert_eq!(ckpt.gguf_metadata()[2], ("general.alignment".to_string(), GgufValue::U32(64)));
    let w = ckpt.tensor("w").unwrap();
    assert_eq!((w.stored, ckpt.bytes(w)), (StoredType::Ggml(q4_0), &blocks[..]));
    let n = ckpt.tensor("n").unwrap();
    assert_eq!((n.stored, &n.shape[..], ckpt.bytes(n)), (StoredType::Plain(DType::Float16), &[3, 1][..], &halves[..]));
    assert_eq!(n.offset % 64, 0);
}

#[test]
fn shard_indexes_are_checked_like_external_data() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("model");
    std::fs::create_dir(&root).unwrap();
    let shard = |name: &str, tensor: &str| {
        let header = format!(r#"{{"{tensor}":{{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}}}"#);
        std::fs::write(root.join(name), safetensors_file(&header, &[1, 2])).unwrap();
    };
    shard("model-00001-of-00002.safetensors", "a");
    shard("model-00002-of-00002.safetensors", "b");
    let index = root.join("model.safetensors.index.json");
    let write_index =
        |map: &str| std::fs::write(&index, format!(r#"{{"metadata":{{}},"weight_map":{{{map}}}}}"#)).unwrap();
    write_index(r#""a":"model-00001-of-00002.safetensors","b":"./model-00002-of-00002.safetensors""#);
    let ckpt = Checkpoint::open(&root).unwrap();
    assert_eq!(ckpt.files().len(), 2);
    assert_eq!(ckpt.tensor("b").unwrap().file, 1);

    let refused = |map: &str| {
        write_index(map);
        Checkpoint::open(&index).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let both = r#""b":"model-00002-of-00002.safetensors""#;
    assert!(refused(&format!(r#""a":"missing.safetensors",{both}"#))
        .contains("shard \"missing.safetensors\": No such file"));
    assert!(refused(&format!(r#""a":"../outside.safetensors",{both}"#)).contains("no root, no '..'"));
    assert!(refused(&format!(r#""a":"/etc/passwd",{both}"#)).contains("no root, no '..'"));
    std::fs::write(dir.path().join("outside.safetensors"), b"x").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("outside.safetensors"), root.join("link.safetensors")).unwrap();
        assert!(refused(&format!(r#""a":"link.safetensors",{both}"#)).contains("leads outside the index's folder"));
    }
    // A tensor the index does not list, one in the wrong shard, one in no shard.
    assert!(refused(r#""a":"model-00001-of-00002.safetensors""#).is_empty(), "unused shards are not read");
    let swapped = refused(r#""a":"model-00002-of-00002.safetensors","b":"model-00001-of-00002.safetensors""#);
    assert!(
        swapped.contains("tensor \"b\": at byte") && swapped.contains("the index puts this tensor in"),
        "{swapped}"
    );
    let missing = refused(r#""a":"model-00002-of-00002.safetensors","b":"model-00002-of-00002.safetensors""#);
    assert!(missing.contains("tensor \"a\"") && missing.contains("which does not hold it"), "{missing}");
    assert!(refused(&format!(
        r#""a":"model-00001-of-00002.safetensors",{both},"c":"model-00001-of-00002.safetensors""#
    ))
    .contains("which does not hold it"));
    assert!(refused(&format!(r#""a":"model-00001-of-00002.safetensors",{both},"a":"x""#)).contains("is given twice"));
}

#[test]
fn a_file_truncated_while_open_is_an_error_where_the_map_would_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.safetensors");
    // Two float32 tensors: 16 bytes of header-declared data.
    let header = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#;
    let bytes = safetensors_file(header, &[0x3F; 16]);
    std::fs::write(&path, &bytes).unwrap();
    let ckpt = Checkpoint::open(&path).unwrap();
    let a = ckpt.tensor("a").unwrap().clone();
    assert_eq!(ckpt.bytes_checked(&a).unwrap(), &[0x3F; 8]);
    // Another writer cuts the file in the middle of tensor b: borrowing from the map now would
    // raise SIGBUS past the new end; the checked borrow refuses any tensor of the file instead.
    let cut = bytes.len() as u64 - 4;
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
    let message = ckpt.bytes_checked(&a).unwrap_err().to_string();
    assert!(
        message.ends_with(&format!(
            "the file is {cut} bytes now, {} when it was opened: another process changed it while lowbit was reading it",
            bytes.len()
        )),
        "{message}"
    );
    // The positioned reads of the streaming commands: an ordinary read error past the end.
    let b = ckpt.tensor("b").unwrap().clone();
    assert!(ckpt.read_at(&b, 0, &mut [0u8; 8]).is_err());
}
