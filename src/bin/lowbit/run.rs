//! `lowbit run`: an ONNX model on TensorProto inputs checked against the graph.

use crate::{printed, set_limit, Outcome};
use lowbit::files;
use lowbit::onnx::{limits::Limits, outputs, runner::Model, tensor_proto};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The model file (external data is read from its directory, never outside it).
    model: PathBuf,
    /// An input as NAME=FILE.pb (a serialized TensorProto); repeat for each input, once each.
    #[arg(long = "input", value_name = "NAME=FILE.pb")]
    inputs: Vec<String>,
    /// Where the outputs go (a folder; created if missing).
    #[arg(long)]
    output_dir: PathBuf,
    #[arg(long, default_value = "spec", value_parser = crate::profile_parser())]
    profile: lowbit::Profile,
    /// Bytes the run may hold at once (K, M, G, T suffixes are powers of 1024; `unlimited`).
    /// Default: half of this machine's memory (physical, cgroup and address-space limits), or
    /// 4G when it cannot be read.
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<String>,
    /// Elements the run may process over all nodes and Loop iterations (suffixes as above).
    /// Default: 4G (2^32); arithmetic, Range and text casts count several per element.
    #[arg(long, value_name = "ELEMENTS")]
    max_work: Option<String>,
    /// Largest model or TensorProto file read (suffixes as above). Default: 4G.
    #[arg(long, value_name = "BYTES")]
    max_input_bytes: Option<String>,
}

pub fn run(args: Args) -> Outcome {
    let mut limits = Limits::default();
    set_limit(&mut limits.max_memory, args.max_memory.as_deref())?;
    set_limit(&mut limits.max_work, args.max_work.as_deref())?;
    set_limit(&mut limits.max_input_bytes, args.max_input_bytes.as_deref())?;
    if args.output_dir.exists() && !args.output_dir.is_dir() {
        return Err(lowbit::Error::Io {
            path: args.output_dir.display().to_string(),
            message: "--output-dir is a file, not a folder".into(),
        }
        .into());
    }
    let model = Model::load_with(&args.model, &limits)?;
    // Refuse unusable output names before spending any time on the run.
    for name in model.output_names() {
        files::check_output_name(&name)?;
    }
    let mut specs = Vec::new();
    for spec in &args.inputs {
        specs.push(spec.split_once('=').ok_or_else(|| {
            crate::usage("run", format!("--input {} is not NAME=FILE.pb", lowbit::Error::quote(spec)))
        })?);
    }
    // Names first (unknown, repeated, missing), before any file is read.
    let names: Vec<&str> = specs.iter().map(|(name, _)| *name).collect();
    lowbit::onnx::inputs::check_input_names(&model, &names)?;
    let mut given = Vec::new();
    for (name, file) in specs {
        given.push((name.to_string(), tensor_proto::read_tensor_file_with(file.as_ref(), &limits)?));
    }
    let named = lowbit::onnx::inputs::bind_inputs(&model, given)?;
    let outputs = model.run_with(&named, args.profile, &limits)?;
    let paths = outputs::write_outputs(&args.output_dir, &outputs)?;
    let lines: Vec<String> = paths
        .iter()
        .zip(&outputs)
        .map(|(path, (_, tensor))| format!("{} {} {:?}", path.display(), tensor.dtype(), tensor.shape()))
        .collect();
    printed(&lines.join("\n"))
}
