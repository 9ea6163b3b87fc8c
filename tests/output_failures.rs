//! Standard output that fails (a closed pipe, a full device) and raw input streamed in pieces.

use lowbit::packing;
use lowbit::CastOptions;
use lowbit::DType;
use lowbit::Profile;
use lowbit::{Plan, StreamError, STREAM_PIECE};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Runs lowbit with `input` on standard input and standard output a pipe whose reader closes it
/// before reading anything. Returns (exit status, standard error).
fn with_closed_stdout(args: &[&str], input: &[u8]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end first: every write lowbit makes then fails with EPIPE.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_141() {
    let raw = vec![0u8; 4 << 20];
    // Large outputs: the write certainly meets the closed pipe.
    for args in [
        &["range4", "0:i64", "100000:i64", "1:i64", "--output-type", "int32"][..],
        &["range4", "0:i64", "100000:i64", "1:i64", "--output-type", "int32", "--raw"],
        &["cast", "--from", "float", "--to", "float16"],
    ] {
        let (status, err) = with_closed_stdout(args, &raw);
        assert_eq!(status, Some(141), "{args:?}: stderr {err:?}");
        assert_eq!(err, "", "{args:?}");
    }
    // Small outputs: another test's process starting at the same moment may briefly hold a copy
    // of the pipe's reading end, and then the write succeeds; either way nothing is said.
    for args in [&["info", "float"][..], &["cast", "--from", "float", "--to", "float8e4m3fn", "1.5", "2.5"]] {
        let (status, err) = with_closed_stdout(args, &raw);
        assert!(matches!(status, Some(141 | 0)), "{args:?}: status {status:?}, stderr {err:?}");
        assert_eq!(err, "", "{args:?}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_device_is_an_error_with_status_1() {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for (args, input) in [
        (&["info", "float"][..], Vec::new()),
        // Small enough to sit in a buffer: the failure must still be seen (flushed and checked).
        (&["cast", "--from", "float", "--to", "float16"][..], vec![0u8; 800]),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lowbit"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(full())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(err.starts_with("lowbit: standard output: "), "{args:?}: {err:?}");
        assert!(err.contains("No space left"), "{err:?}");
    }
}

/// A pseudo-random stream of `bytes` bytes.
fn noise(bytes: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..bytes)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn streams_equal_whole_buffers_across_pieces() {
    // Three whole pieces and a tail, under the profile with positional rules, and packed types
    // whose pieces must start on a byte.
    let n = 3 * STREAM_PIECE + 13;
    for (from, to, profile) in [
        (DType::Float, DType::Float16, Profile::OnnxRuntime),
        (DType::Float16, DType::Float, Profile::OnnxRuntime),
        (DType::Float, DType::Int4, Profile::Spec),
        (DType::Float6E3M2, DType::Float, Profile::Spec),
        (DType::Uint2, DType::Bfloat16, Profile::OnnxReference),
    ] {
        let src = noise(packing::raw_len(from, n).unwrap());
        let plan = Plan::new(from, to, &CastOptions::with_profile(profile)).unwrap();
        let mut whole = vec![0u8; packing::raw_len(to, n).unwrap()];
        plan.run(&src, &mut whole, n).unwrap();
        // Without a count, the stream converts the elements its bytes hold: for packed dtypes only
        // a count ending on a byte can go without it.
        let whole_bytes = packing::raw_len(from, n).unwrap() * 8 / from.bits().unwrap() as usize == n;
        for (count, threads) in [(None, 1), (Some(n), 2)] {
            if count.is_none() && !whole_bytes {
                continue;
            }
            let mut out = Vec::new();
            let converted = plan.run_stream(&mut &src[..], &mut out, count, threads).unwrap();
            assert_eq!(converted, n, "{from} -> {to}");
            assert!(out == whole, "{from} -> {to} ({count:?}, {threads} threads): the stream differs");
        }
    }
}

#[test]
fn stream_lengths_are_checked() {
    let plan = Plan::new(DType::Float, DType::Float16, &CastOptions::default()).unwrap();
    let run = |input: &[u8], count| {
        let mut out = Vec::new();
        plan.run_stream(&mut &input[..], &mut out, count, 1)
    };
    assert_eq!(run(&[], None).unwrap(), 0);
    let Err(StreamError::Data(e)) = run(&[0; 6], None) else { panic!("6 bytes are not whole float32s") };
    assert!(e.to_string().contains("FLOAT"), "{e}");
    let Err(StreamError::Data(e)) = run(&[0; 8], Some(3)) else { panic!("8 bytes are not 3 float32s") };
    assert!(e.to_string().contains("12"), "{e}");
    let Err(StreamError::Data(e)) = run(&[0; 16], Some(3)) else { panic!("16 bytes are more than 3 float32s") };
    assert!(e.to_string().contains("more than the 3"), "{e}");
    // An odd int4 count needs the count: 2 bytes are 4 elements, or 3 with the count.
    let plan = Plan::new(DType::Int4, DType::Int8, &CastOptions::default()).unwrap();
    let mut out = Vec::new();
    assert_eq!(plan.run_stream(&mut &[0x21u8, 0x03][..], &mut out, Some(3), 1).unwrap(), 3);
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn a_failing_output_stops_the_stream() {
    struct Refuses;
    impl Write for Refuses {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "reader gone"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let plan = Plan::new(DType::Float, DType::Float16, &CastOptions::default()).unwrap();
    let input = vec![0u8; 4 * STREAM_PIECE * 2];
    let Err(StreamError::Output(e)) = plan.run_stream(&mut &input[..], &mut Refuses, None, 1) else {
        panic!("the output refused every byte")
    };
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
}

#[cfg(target_os = "linux")]
#[test]
fn a_benchmark_larger_than_memory_is_refused_before_allocating() {
    // Under a 4 GB address-space limit (half of it usable), 2^28 float64 elements need ~9.7 GB.
    let script = format!(
        "ulimit -v 4000000 && exec {} bench --from double --to float --elements 268435456",
        env!("CARGO_BIN_EXE_lowbit")
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--elements 268435456") && err.contains("bytes"), "{err}");
}
