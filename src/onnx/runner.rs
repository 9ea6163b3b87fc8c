//! A small graph runner for models made of Cast, CastLike, Range, Slice, Gather, QuantizeLinear,
//! DequantizeLinear, DynamicQuantizeLinear, Constant and Identity, plus what the function bodies
//! of Range and DynamicQuantizeLinear use (Sub, Div, Ceil, Relu, Add, Loop; Max, Min, Clip, Round,
//! ReduceMax, ReduceMin), so that the `_expanded` node tests run the body the spec gives. Each node
//! sees the opset version of its domain and its own attributes. Anything else is an error naming
//! the op.
//!
//! Scheduling: nodes run in dependency order, found in linear time (Kahn's algorithm over
//! producer -> consumer edges, ready nodes taken in file order). A Loop depends on the values its
//! body reads from the enclosing graphs as well as on its inputs.
//!
//! Memory and work are bounded by [`Limits`]: every allocation whose size comes from the model or
//! its inputs (decoded initializers and constants, node outputs, broadcast results, string
//! contents, Loop scan outputs, an op's scratch space) is charged to the memory budget before it
//! is made, and each value is freed (and its charge released) right after its last consumer runs.
//! Identity passes its input on without copying. Every node run and Loop iteration is charged to
//! the work budget. Going over either is an [`Error::OverBudget`] naming the node.

use super::budget::{string_headers, tensor_bytes, Budget, Reservation};
use super::elementwise::{binary, clip, numeric, reduce, unary, unary_with};
use super::limits::{work_per_element, Limits, NODE_RUN_WORK};
use super::matmul_nbits::{self, Attributes as MatMulNBitsAttributes};
use super::proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto};
use super::tensor_proto::tensor_from_proto;
use super::{err, quoted, shown_op};
use crate::cast::{cast_like_op, cast_op, CastAttributes, CastTo};
use crate::dtype::DType;
use crate::error::{shown_shape, Error, Result};
use crate::files::read_file_limited;
use crate::ops::{self, range::RangeOptions, slice::SliceArgs, AllocationGuard};
use crate::packing;
use crate::profile::Profile;
use crate::quant::{self, DequantizeAttributes, QuantizeAttributes};
use crate::tensor::{element_count, Number, Tensor};
use prost::Message;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::{self, Display};
use std::path::Path;
use std::rc::Rc;

/// An op's error with the node it happened in. A budget error already names the node and stays
/// as it is (its type is what callers match on).
fn at_node(op: &str, site: &Site<'_>, e: Error) -> Error {
    match e {
        Error::OverBudget { .. } => e,
        e => err(op, format!("{site}: {e}")),
    }
}

/// A loaded model: its graph and the opset version of the default domain.
#[derive(Clone, Debug)]
pub struct Model {
    /// The main graph.
    pub graph: GraphProto,
    /// The opset version imported for the default (`""` or `ai.onnx`) domain.
    pub opset: i64,
}

/// What a run used, from [`Model::run_measured`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    /// The most bytes held against the memory budget at once.
    pub peak_memory: u64,
    /// The elements charged to the work budget.
    pub work: u64,
}

impl Model {
    /// Parses a serialized `ModelProto`. Tensors stored as external data stay unread (there is no
    /// directory to read them from): running a node that needs one is an error; use
    /// [`Model::load`] for such models.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        let proto = ModelProto::decode(bytes).map_err(|e| err("model", format!("not a valid ModelProto: {e}")))?;
        let graph = proto.graph.ok_or_else(|| err("model", "the model has no graph"))?;
        let opset = proto
            .opset_import
            .iter()
            .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
            .and_then(|o| o.version)
            .ok_or_else(|| err("model", "the model imports no version of the default ONNX domain"))?;
        Ok(Model { graph, opset })
    }

    /// Reads a `.onnx` file with the default [`Limits`].
    pub fn load(path: &Path) -> Result<Model> {
        Model::load_with(path, &Limits::default())
    }

    /// Reads a `.onnx` file: a regular file of at most `limits.max_input_bytes` bytes, whose
    /// external data ([`super::external`]) is read from the model's directory, within
    /// `limits.max_memory` bytes in all.
    pub fn load_with(path: &Path, limits: &Limits) -> Result<Model> {
        let bytes = read_file_limited(path, limits.max_input_bytes)?;
        let mut model = Model::from_bytes(&bytes)
            .map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })?;
        drop(bytes);
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        super::external::resolve(&mut model.graph, dir, limits)?;
        Ok(model)
    }

    /// The names of the graph inputs that are not initializers, in order.
    #[must_use]
    pub fn input_names(&self) -> Vec<String> {
        let init: HashSet<&str> = self.graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
        self.graph.input.iter().filter_map(|i| i.name.clone()).filter(|n| !init.contains(n.as_str())).collect()
    }

    /// The names of the graph outputs, in order.
    #[must_use]
    pub fn output_names(&self) -> Vec<String> {
        self.graph.output.iter().filter_map(|o| o.name.clone()).collect()
    }

    /// Runs the graph on named inputs under the default [`Limits`] and returns the outputs in
    /// graph order.
    pub fn run(&self, inputs: &HashMap<String, Tensor>, profile: Profile) -> Result<Vec<(String, Tensor)>> {
        self.run_with(inputs, profile, &Limits::default())
    }

    /// Runs the graph on named inputs within `limits` and returns the outputs in graph order.
    pub fn run_with(
        &self,
        inputs: &HashMap<String, Tensor>,
        profile: Profile,
        limits: &Limits,
    ) -> Result<Vec<(String, Tensor)>> {
        self.run_measured(inputs, profile, limits).map(|(outputs, _)| outputs)
    }

    /// [`Model::run_with`], also reporting the peak memory and the work the run used.
    pub fn run_measured(
        &self,
        inputs: &HashMap<String, Tensor>,
        profile: Profile,
        limits: &Limits,
    ) -> Result<(Vec<(String, Tensor)>, RunStats)> {
        let expected = self.input_names();
        for name in inputs.keys() {
            if !expected.contains(name) {
                let listed: Vec<String> = expected.iter().take(10).map(|n| quoted(n)).collect();
                return Err(err(
                    "run",
                    format!(
                        "the model has no input named {}; its inputs: [{}]{}",
                        quoted(name),
                        listed.join(", "),
                        if expected.len() > 10 { format!(" and {} more", expected.len() - 10) } else { String::new() }
                    ),
                ));
            }
        }
        for name in &expected {
            if !inputs.contains_key(name) {
                return Err(err("run", format!("missing input {}", quoted(name))));
            }
        }
        let runner = Runner { opset: self.opset, profile, budget: Budget::new(limits) };
        let graph = &self.graph;
        let given: Vec<&str> = expected.iter().map(String::as_str).collect();
        let plan = Schedule::new(graph, &given, None, None)?;
        let mut values: Vec<Option<Slot<'_>>> = vec![None; plan.names.len()];
        for (name, tensor) in inputs {
            if let Some(&k) = plan.index.get(name.as_str()) {
                values[k] = Some(Slot::Input(tensor));
            }
        }
        runner.run_graph(graph, &plan, &mut values, None, None)?;
        let slots: Vec<(String, Slot<'_>)> = plan
            .outputs
            .iter()
            .map(|(name, r)| {
                let slot = match r {
                    Ref::Local(k) => values[*k].clone(),
                    _ => None,
                };
                slot.map(|s| (name.clone(), s))
                    .ok_or_else(|| err("run", format!("output {} was not produced", quoted(name))))
            })
            .collect::<Result<_>>()?;
        drop(values);
        let site = OutputSite;
        let mut outputs = Vec::with_capacity(slots.len());
        let mut slots = slots;
        // Outputs are moved out of the run where possible; an output that is a caller's input or
        // that appears twice is copied, and the copy is charged.
        while let Some((name, slot)) = slots.pop() {
            let tensor = match slot {
                Slot::Made(held) => match Rc::try_unwrap(held) {
                    Ok(held) => held.tensor,
                    Err(shared) => runner.charged_copy(&shared.tensor, &site)?,
                },
                Slot::Input(t) => runner.charged_copy(t, &site)?,
            };
            outputs.push((name, tensor));
        }
        outputs.reverse();
        let stats = RunStats { peak_memory: runner.budget.peak_memory(), work: runner.budget.work_done() };
        Ok((outputs, stats))
    }
}

struct Runner {
    opset: i64,
    profile: Profile,
    budget: Budget,
}

/// A tensor made by the run, with the memory charge it releases when it is freed.
struct Held {
    tensor: Tensor,
    _reservation: Reservation,
}

/// A value in a graph: a caller's input (borrowed) or a tensor made by the run (shared, so that
/// Identity and loop-carried values pass it on without copying).
#[derive(Clone)]
enum Slot<'i> {
    Input(&'i Tensor),
    Made(Rc<Held>),
}

impl Slot<'_> {
    fn tensor(&self) -> &Tensor {
        match self {
            Slot::Input(t) => t,
            Slot::Made(held) => &held.tensor,
        }
    }
}

/// Where a node's input comes from.
#[derive(Clone, Debug)]
enum Ref {
    /// An optional input left out (an empty name).
    Absent,
    /// A value of this graph, by index into [`Schedule::names`].
    Local(usize),
    /// A value of an enclosing graph (a Loop body reading its surroundings), by name.
    Outer(String),
}

/// Where a node sits, for error messages: op type and name (or index), inside which Loop bodies.
struct Site<'a> {
    node: &'a NodeProto,
    index: usize,
    within: Option<&'a Site<'a>>,
}

impl Display for Site<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(outer) = self.within {
            write!(f, "{outer} body: ")?;
        }
        write!(f, "{} node ", shown_op(op_name(self.node)))?;
        match self.node.name.as_deref() {
            Some(name) if !name.is_empty() => f.write_str(&quoted(name)),
            _ => write!(f, "#{} (unnamed)", self.index),
        }
    }
}

/// An initializer being decoded, for error messages.
struct InitializerSite<'a> {
    name: &'a str,
    within: Option<&'a Site<'a>>,
}

impl Display for InitializerSite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(outer) = self.within {
            write!(f, "{outer} body: ")?;
        }
        write!(f, "initializer {}", quoted(self.name))
    }
}

/// The copies of graph outputs made at the end of a run, for error messages.
struct OutputSite;

impl Display for OutputSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("copying the graph outputs")
    }
}

/// A graph prepared for running: its values numbered, each node's inputs resolved, the order of
/// the nodes and how many consumers each value has, so that a value can be freed when its last
/// consumer has run.
struct Schedule<'g> {
    /// Every value of this graph: given ones (inputs, initializers) and node outputs.
    names: Vec<&'g str>,
    index: HashMap<&'g str, usize>,
    /// The initializers to decode, by value index (only those that are used).
    initializers: Vec<(usize, &'g TensorProto)>,
    /// Each node's inputs, in order.
    inputs: Vec<Vec<Ref>>,
    /// Each node's outputs (`None` for an empty name).
    outputs_of: Vec<Vec<Option<usize>>>,
    /// The local values each node reads (inputs and what its subgraphs read), once each.
    reads: Vec<Vec<usize>>,
    /// Consumers of each value; graph outputs count one more that never runs, so they stay.
    uses: Vec<u32>,
    /// Node indices in an order where every producer comes before its consumers.
    order: Vec<usize>,
    /// The graph outputs.
    outputs: Vec<(String, Ref)>,
}

/// The names a graph reads from its enclosing graphs: those its nodes (and their subgraphs) use
/// and it does not define itself.
fn free_names(graph: &GraphProto) -> HashSet<String> {
    let mut defined: HashSet<&str> = graph.input.iter().filter_map(|v| v.name.as_deref()).collect();
    defined.extend(graph.initializer.iter().filter_map(|t| t.name.as_deref()));
    defined.extend(graph.node.iter().flat_map(|n| n.output.iter().map(String::as_str)));
    let mut free = HashSet::new();
    for node in &graph.node {
        for name in node.input.iter().filter(|i| !i.is_empty() && !defined.contains(i.as_str())) {
            free.insert(name.clone());
        }
        for sub in subgraphs(node) {
            free.extend(free_names(sub).into_iter().filter(|n| !defined.contains(n.as_str())));
        }
    }
    for output in graph.output.iter().filter_map(|o| o.name.as_deref()) {
        if !defined.contains(output) {
            free.insert(output.to_string());
        }
    }
    free
}

fn subgraphs(node: &NodeProto) -> impl Iterator<Item = &GraphProto> {
    node.attribute.iter().flat_map(|a| a.g.as_deref().into_iter().chain(&a.graphs))
}

impl<'g> Schedule<'g> {
    /// Plans `graph` given the values named in `given` (and its initializers); names it neither
    /// defines nor is given must be visible in `outer`.
    fn new(
        graph: &'g GraphProto,
        given: &[&'g str],
        outer: Option<&Scope<'_, '_>>,
        within: Option<&Site<'_>>,
    ) -> Result<Schedule<'g>> {
        let mut plan = Schedule {
            names: Vec::new(),
            index: HashMap::new(),
            initializers: Vec::new(),
            inputs: Vec::with_capacity(graph.node.len()),
            outputs_of: Vec::with_capacity(graph.node.len()),
            reads: Vec::with_capacity(graph.node.len()),
            uses: Vec::new(),
            order: Vec::with_capacity(graph.node.len()),
            outputs: Vec::new(),
        };
        for &name in given {
            plan.define(name);
        }
        let mut initializers = Vec::new();
        for t in &graph.initializer {
            if let Some(name) = t.name.as_deref().filter(|n| !n.is_empty()) {
                initializers.push((plan.define(name), t));
            }
        }
        let given_count = plan.names.len();
        // Which node produces each value; a value has one producer.
        let mut producer: Vec<Option<usize>> = vec![None; given_count];
        for (i, node) in graph.node.iter().enumerate() {
            let mut outs = Vec::with_capacity(node.output.len());
            for name in &node.output {
                if name.is_empty() {
                    outs.push(None);
                    continue;
                }
                let site = Site { node, index: i, within };
                if let Some(&k) = plan.index.get(name.as_str()) {
                    let by = match producer[k] {
                        Some(j) => format!("node #{j}"),
                        None => "a graph input or initializer".to_string(),
                    };
                    return Err(err(
                        op_name(node),
                        format!("{site}: output {} is already produced by {by}", quoted(name)),
                    ));
                }
                let k = plan.define(name);
                producer.push(Some(i));
                outs.push(Some(k));
            }
            plan.outputs_of.push(outs);
        }
        let available_outside = |name: &str| outer.is_some_and(|o| o.get(name).is_some());
        // Edges producer -> consumer, counted per consumer for Kahn's algorithm.
        let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); graph.node.len()];
        let mut waiting_on: Vec<usize> = vec![0; graph.node.len()];
        for (i, node) in graph.node.iter().enumerate() {
            let site = Site { node, index: i, within };
            let resolve = |name: &str| -> Result<Ref> {
                match plan.index.get(name) {
                    Some(&k) => Ok(Ref::Local(k)),
                    None if available_outside(name) => Ok(Ref::Outer(name.to_string())),
                    None => Err(err(op_name(node), format!("{site}: input {} is never produced", quoted(name)))),
                }
            };
            let mut inputs = Vec::with_capacity(node.input.len());
            let mut reads: Vec<usize> = Vec::new();
            for name in &node.input {
                let r = if name.is_empty() { Ref::Absent } else { resolve(name)? };
                if let Ref::Local(k) = r {
                    reads.push(k);
                }
                inputs.push(r);
            }
            for sub in subgraphs(node) {
                for name in free_names(sub) {
                    if let Ref::Local(k) = resolve(&name)? {
                        reads.push(k);
                    }
                }
            }
            reads.sort_unstable();
            reads.dedup();
            for &k in &reads {
                plan.uses[k] += 1;
                if let Some(j) = producer[k] {
                    consumers[j].push(i);
                    waiting_on[i] += 1;
                }
            }
            plan.inputs.push(inputs);
            plan.reads.push(reads);
        }
        for output in &graph.output {
            let name = output.name.clone().unwrap_or_default();
            let r = match plan.index.get(name.as_str()) {
                Some(&k) => {
                    plan.uses[k] = plan.uses[k].saturating_add(1);
                    Ref::Local(k)
                }
                None if available_outside(&name) => Ref::Outer(name.clone()),
                None => return Err(err("run", format!("output {} is never produced", quoted(&name)))),
            };
            plan.outputs.push((name, r));
        }
        // Kahn's algorithm: ready nodes in file order, each edge looked at once.
        let mut ready: VecDeque<usize> = (0..graph.node.len()).filter(|&i| waiting_on[i] == 0).collect();
        while let Some(i) = ready.pop_front() {
            plan.order.push(i);
            for &c in &consumers[i] {
                waiting_on[c] -= 1;
                if waiting_on[c] == 0 {
                    ready.push_back(c);
                }
            }
        }
        if plan.order.len() < graph.node.len() {
            let stuck = (0..graph.node.len()).find(|&i| waiting_on[i] > 0).unwrap_or(0);
            let node = &graph.node[stuck];
            let site = Site { node, index: stuck, within };
            let waits: Vec<String> = plan.reads[stuck]
                .iter()
                .filter(|&&k| producer[k].is_some_and(|j| waiting_on[j] > 0))
                .take(3)
                .map(|&k| quoted(plan.names[k]))
                .collect();
            return Err(err(
                op_name(node),
                format!("{site}: inputs [{}] are never produced (the graph has a cycle)", waits.join(", ")),
            ));
        }
        plan.initializers = initializers.into_iter().filter(|&(k, _)| plan.uses[k] > 0).collect();
        Ok(plan)
    }

    fn define(&mut self, name: &'g str) -> usize {
        if let Some(&k) = self.index.get(name) {
            return k;
        }
        let k = self.names.len();
        self.names.push(name);
        self.index.insert(name, k);
        self.uses.push(0);
        k
    }
}

/// The values visible to a graph while it runs: its own, then its enclosing graph's (a Loop body
/// reads outer values).
struct Scope<'s, 'i> {
    plan: &'s Schedule<'s>,
    values: &'s [Option<Slot<'i>>],
    outer: Option<&'s Scope<'s, 'i>>,
}

impl<'s, 'i> Scope<'s, 'i> {
    fn get(&self, name: &str) -> Option<&'s Slot<'i>> {
        match self.plan.index.get(name) {
            Some(&k) => self.values[k].as_ref(),
            None => self.outer.and_then(|o| o.get(name)),
        }
    }

    fn resolve(&self, r: &Ref) -> Option<Slot<'i>> {
        match r {
            Ref::Absent => None,
            Ref::Local(k) => self.values[*k].clone(),
            Ref::Outer(name) => self.outer.and_then(|o| o.get(name)).cloned(),
        }
    }
}

/// The budget as an op sees it: each output allocation is charged as work (its elements) and as
/// memory (held until the node finishes; the outputs are then charged at their real size).
struct NodeGuard<'b> {
    budget: &'b Budget,
    scratch: Reservation,
    site: &'b dyn Display,
    /// Work per element written ([`work_per_element`]).
    weight: u64,
}

impl AllocationGuard for NodeGuard<'_> {
    fn before_allocating(&mut self, elements: usize, bytes: usize) -> Result<()> {
        // Memory first: an allocation too large to make is the more useful thing to report.
        self.scratch.grow(bytes as u64, self.site)?;
        self.budget.charge_work((elements as u64).saturating_mul(self.weight), self.site)
    }
}

/// What a node returns: a value passed on as it is, or a new tensor.
enum Out<'i> {
    Same(Slot<'i>),
    New(Tensor),
}

fn attr<'a>(node: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    node.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

fn attr_int(node: &NodeProto, name: &str) -> Option<i64> {
    attr(node, name).and_then(|a| a.i)
}

fn attr_string(node: &NodeProto, name: &str) -> Result<Option<String>> {
    match attr(node, name).and_then(|a| a.s.clone()) {
        None => Ok(None),
        Some(bytes) => {
            String::from_utf8(bytes).map(Some).map_err(|_| err(op_name(node), format!("attribute {name} is not UTF-8")))
        }
    }
}

fn op_name(node: &NodeProto) -> &str {
    node.op_type.as_deref().unwrap_or("<no op_type>")
}

/// The most bytes of text a number takes as a string (the longest is a float64 such as
/// `-2.2250738585072014e-308`, 24 bytes): a Cast to STRING is charged this much per element
/// before it runs, and its output at its real size after.
const MAX_NUMBER_TEXT: u64 = 40;

/// The elements and bytes of the tensor a `TensorProto` decodes to, or zeros when it does not
/// decode (the decoder reports why).
fn proto_size(p: &TensorProto) -> (usize, u64) {
    let shape: Option<Vec<usize>> = p.dims.iter().map(|&d| usize::try_from(d).ok()).collect();
    let Some(n) = shape.and_then(|s| element_count(&s).ok()) else { return (0, 0) };
    let Ok(dtype) = DType::from_onnx_number(i64::from(p.data_type.unwrap_or(0))) else { return (0, 0) };
    let bytes = if dtype == DType::String {
        p.string_data.iter().map(|s| s.len() as u64).sum::<u64>() + string_headers(n)
    } else {
        packing::raw_len(dtype, n).map_or(0, |b| b as u64)
    };
    (n, bytes)
}

/// The elements and bytes of a Constant node's value.
fn constant_size(node: &NodeProto) -> (usize, u64) {
    let Some(a) = node.attribute.first() else { return (0, 0) };
    match a.name.as_deref() {
        Some("value") => a.t.as_ref().map_or((0, 0), proto_size),
        Some("value_floats") => (a.floats.len(), 4 * a.floats.len() as u64),
        Some("value_ints") => (a.ints.len(), 8 * a.ints.len() as u64),
        Some("value_string") => (1, a.s.as_ref().map_or(0, |s| s.len() as u64) + string_headers(1)),
        Some("value_strings") => {
            (a.strings.len(), a.strings.iter().map(|s| s.len() as u64).sum::<u64>() + string_headers(a.strings.len()))
        }
        _ => (1, 8),
    }
}

/// The bytes a Cast of `input` to `to` allocates, at most.
fn cast_size(input: &Tensor, to: DType) -> u64 {
    let n = input.len();
    // A type the cast refuses allocates nothing; the cast reports it.
    let raw = |dtype: DType| packing::raw_len(dtype, n).map_or(0, |b| b as u64);
    match (input.dtype(), to) {
        (from, to) if from == to => tensor_bytes(input),
        (_, DType::String) => string_headers(n) + n as u64 * MAX_NUMBER_TEXT,
        // The parsed codes, then the packed output.
        (DType::String, to) => 8 * n as u64 + raw(to),
        (_, to) => raw(to),
    }
}

fn cast_attributes(node: &NodeProto) -> Result<CastAttributes> {
    let to = match attr(node, "to") {
        Some(a) if a.s.is_some() => Some(CastTo::Name(attr_string(node, "to")?.unwrap_or_default())),
        Some(a) => a.i.map(CastTo::Number),
        None => None,
    };
    Ok(CastAttributes { to, saturate: attr_int(node, "saturate"), round_mode: attr_string(node, "round_mode")? })
}

impl Runner {
    /// Charges a new tensor at its size and makes it a value.
    fn hold<'i>(&self, tensor: Tensor, site: &dyn Display) -> Result<Slot<'i>> {
        let reservation = self.budget.reserve(tensor_bytes(&tensor), site)?;
        Ok(Slot::Made(Rc::new(Held { tensor, _reservation: reservation })))
    }

    /// A copy of `t`, charged before it is made.
    fn charged_copy(&self, t: &Tensor, site: &dyn Display) -> Result<Tensor> {
        let _copy = self.budget.reserve(tensor_bytes(t), site)?;
        Ok(t.clone())
    }

    /// Runs the nodes of `graph` in `plan`'s order. `values` holds the given values (graph or body
    /// inputs); on return it holds the graph outputs (and nothing freed).
    fn run_graph<'i>(
        &self,
        graph: &GraphProto,
        plan: &Schedule<'_>,
        values: &mut [Option<Slot<'i>>],
        outer: Option<&Scope<'_, 'i>>,
        within: Option<&Site<'_>>,
    ) -> Result<()> {
        for &(k, proto) in &plan.initializers {
            let site = InitializerSite { name: plan.names[k], within };
            let (elements, bytes) = proto_size(proto);
            self.budget.charge_work(elements as u64, &site)?;
            let scratch = self.budget.reserve(bytes, &site)?;
            let tensor = tensor_from_proto(proto)?;
            drop(scratch);
            values[k] = Some(self.hold(tensor, &site)?);
        }
        // Given values nobody reads are freed at once.
        for (k, slot) in values.iter_mut().enumerate() {
            if plan.uses[k] == 0 {
                *slot = None;
            }
        }
        let mut remaining = plan.uses.clone();
        for &i in &plan.order {
            let node = &graph.node[i];
            let site = Site { node, index: i, within };
            let outputs = {
                let scope = Scope { plan, values, outer };
                let inputs: Vec<Option<Slot<'i>>> = plan.inputs[i].iter().map(|r| scope.resolve(r)).collect();
                for (r, slot) in plan.inputs[i].iter().zip(&inputs) {
                    if slot.is_none() && !matches!(r, Ref::Absent) {
                        let name = match r {
                            Ref::Local(k) => plan.names[*k],
                            Ref::Outer(name) => name,
                            Ref::Absent => "",
                        };
                        return Err(err(op_name(node), format!("{site}: input {} was not produced", quoted(name))));
                    }
                }
                self.run_node(node, &site, &inputs, &scope)?
            };
            for (slot, out) in outputs.into_iter().zip(&plan.outputs_of[i]) {
                if let Some(k) = *out {
                    if remaining[k] > 0 {
                        values[k] = Some(slot);
                    }
                }
            }
            for &k in &plan.reads[i] {
                remaining[k] -= 1;
                if remaining[k] == 0 {
                    values[k] = None;
                }
            }
        }
        Ok(())
    }

    fn run_node<'i>(
        &self,
        node: &NodeProto,
        site: &Site<'_>,
        inputs: &[Option<Slot<'i>>],
        scope: &Scope<'_, 'i>,
    ) -> Result<Vec<Slot<'i>>> {
        self.budget.charge_work(NODE_RUN_WORK, site)?;
        let mut guard = NodeGuard { budget: &self.budget, scratch: self.budget.empty_reservation(), site, weight: 1 };
        let outputs = self.compute(node, site, inputs, scope, &mut guard)?;
        // The scratch charges end here; the outputs are charged at their real size instead.
        drop(guard);
        outputs
            .into_iter()
            .map(|out| match out {
                Out::Same(slot) => Ok(slot),
                Out::New(tensor) => self.hold(tensor, site),
            })
            .collect()
    }

    fn compute<'i>(
        &self,
        node: &NodeProto,
        site: &Site<'_>,
        inputs: &[Option<Slot<'i>>],
        scope: &Scope<'_, 'i>,
        guard: &mut NodeGuard<'_>,
    ) -> Result<Vec<Out<'i>>> {
        let op = op_name(node);
        let contrib = node.domain.as_deref() == Some("com.microsoft") && op == "MatMulNBits";
        if !contrib && !matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx")) {
            let domain = quoted(node.domain.as_deref().unwrap_or(""));
            return Err(err(op, format!("unsupported op {}::{}", domain, shown_op(op))));
        }
        let slot = |k: usize| -> Result<&Slot<'i>> {
            inputs.get(k).and_then(Option::as_ref).ok_or_else(|| err(op, format!("input {k} is missing")))
        };
        let input = |k: usize| slot(k).map(Slot::tensor);
        let optional = |k: usize| inputs.get(k).and_then(Option::as_ref).map(Slot::tensor);
        let new = match op {
            "Identity" => return Ok(vec![Out::Same(slot(0)?.clone())]),
            "Loop" => return self.run_loop(node, site, inputs, scope, guard),
            "Constant" => {
                let (elements, bytes) = constant_size(node);
                guard.before_allocating(elements, bytes as usize)?;
                constant(node)?
            }
            "Cast" => {
                let attrs = cast_attributes(node)?;
                let x = input(0)?;
                let to = match &attrs.to {
                    Some(CastTo::Number(n)) => DType::from_onnx_number(*n).ok(),
                    Some(CastTo::Name(name)) => DType::parse(name).ok(),
                    None => None,
                };
                if let Some(to) = to {
                    guard.weight = work_per_element(op, x.dtype() == DType::String || to == DType::String);
                    guard.before_allocating(x.len(), usize::try_from(cast_size(x, to)).unwrap_or(usize::MAX))?;
                }
                cast_op(x, &attrs, self.opset, self.profile)?
            }
            "CastLike" => {
                let round_mode = attr_string(node, "round_mode")?;
                let saturate = attr_int(node, "saturate");
                let (x, like) = (input(0)?, input(1)?);
                guard.weight = work_per_element(op, x.dtype() == DType::String || like.dtype() == DType::String);
                guard.before_allocating(x.len(), usize::try_from(cast_size(x, like.dtype())).unwrap_or(usize::MAX))?;
                cast_like_op(x, like, saturate, round_mode.as_deref(), self.opset, self.profile)?
            }
            "Add" | "Sub" | "Div" => {
                guard.weight = work_per_element(op, false);
                binary(op, input(0)?, input(1)?, guard)?
            }
            "Max" | "Min" => {
                guard.weight = work_per_element(op, false);
                let first = input(0)?;
                let mut acc: Option<Tensor> = None;
                for k in 1..inputs.len() {
                    let next = binary(op, acc.as_ref().unwrap_or(first), input(k)?, guard)?;
                    acc = Some(next);
                }
                match acc {
                    Some(t) => t,
                    // One operand: a copy of it, charged like any output.
                    None => {
                        numeric(op, first.dtype())?;
                        guard.before_allocating(
                            first.len(),
                            usize::try_from(tensor_bytes(first)).unwrap_or(usize::MAX),
                        )?;
                        first.clone()
                    }
                }
            }
            "Clip" => {
                guard.weight = work_per_element(op, false);
                let x = input(0)?;
                let bound = |k: usize, name: &str| -> Result<Option<Number>> {
                    if self.opset < 11 {
                        // Clip-6's float attributes default to float32's lowest and largest values
                        // (numeric_limits<float>), so an infinity is clipped even without them.
                        let default = if name == "min" { f32::MIN } else { f32::MAX };
                        let bound = attr(node, name).and_then(|a| a.f).unwrap_or(default);
                        return Ok(Some(Number::Float(f64::from(bound))));
                    }
                    match optional(k) {
                        None => Ok(None),
                        Some(t) if t.len() == 1 && t.dtype() == x.dtype() => {
                            Number::of(t.dtype(), t.code(0).expect("one element")).map(Some)
                        }
                        Some(t) => Err(err(
                            op,
                            format!(
                                "{name} must be a scalar of the type of input ({}), not {} {}",
                                x.dtype(),
                                t.dtype(),
                                shown_shape(t.shape())
                            ),
                        )),
                    }
                };
                let (low, high) = (bound(1, "min")?, bound(2, "max")?);
                unary_with(op, x, guard, |v| clip(v, low, high))?
            }
            "Round" => {
                guard.weight = work_per_element(op, false);
                unary(op, input(0)?, guard)?
            }
            "ReduceMax" | "ReduceMin" => {
                guard.weight = work_per_element(op, false);
                let axes = if self.opset < 18 {
                    attr(node, "axes").map(|a| a.ints.clone())
                } else {
                    match optional(1) {
                        Some(t) => Some(ops::integer_values(op, "axes", t)?.into_iter().map(|v| v as i64).collect()),
                        None => None,
                    }
                };
                let noop = self.opset >= 18 && attr_int(node, "noop_with_empty_axes") == Some(1);
                let keepdims = attr_int(node, "keepdims").unwrap_or(1) != 0;
                reduce(op, input(0)?, axes.as_deref(), keepdims, noop, guard)?
            }
            "QuantizeLinear" => {
                guard.weight = work_per_element(op, false);
                let attrs = QuantizeAttributes {
                    axis: attr_int(node, "axis"),
                    saturate: attr_int(node, "saturate"),
                    block_size: attr_int(node, "block_size"),
                    output_dtype: attr_int(node, "output_dtype"),
                    precision: attr_int(node, "precision"),
                };
                quant::linear::quantize_guarded(
                    input(0)?,
                    input(1)?,
                    optional(2),
                    &attrs,
                    self.opset,
                    self.profile,
                    guard,
                )
                .map_err(|e| at_node(op, site, e))?
            }
            "DequantizeLinear" => {
                guard.weight = work_per_element(op, false);
                let attrs = DequantizeAttributes {
                    axis: attr_int(node, "axis"),
                    block_size: attr_int(node, "block_size"),
                    output_dtype: attr_int(node, "output_dtype"),
                };
                quant::linear::dequantize_guarded(
                    input(0)?,
                    input(1)?,
                    optional(2),
                    &attrs,
                    self.opset,
                    self.profile,
                    guard,
                )
                .map_err(|e| at_node(op, site, e))?
            }
            "MatMulNBits" if contrib => {
                let attrs = MatMulNBitsAttributes {
                    k: attr_int(node, "K"),
                    n: attr_int(node, "N"),
                    bits: attr_int(node, "bits"),
                    block_size: attr_int(node, "block_size"),
                };
                guard.weight = matmul_nbits::work(&attrs);
                let rows = input(0)?.len() / attrs.k.filter(|&k| k > 0).map_or(1, |k| k as usize);
                let cols = attrs.n.map_or(0, |n| n.max(0) as usize);
                guard.before_allocating(rows.saturating_mul(cols), rows.saturating_mul(cols).saturating_mul(16))?;
                matmul_nbits::matmul_nbits(
                    input(0)?,
                    input(1)?,
                    input(2)?,
                    optional(3),
                    optional(4),
                    optional(5),
                    &attrs,
                )
                .map_err(|e| at_node(op, site, e))?
            }
            "DynamicQuantizeLinear" => {
                guard.weight = work_per_element(op, false);
                let (y, scale, zero) = quant::dynamic::dynamic_guarded(input(0)?, self.opset, self.profile, guard)
                    .map_err(|e| at_node(op, site, e))?;
                return Ok(vec![Out::New(y), Out::New(scale), Out::New(zero)]);
            }
            "Ceil" | "Relu" => {
                guard.weight = work_per_element(op, false);
                unary(op, input(0)?, guard)?
            }
            "Range" => {
                guard.weight = work_per_element(op, false);
                // The budgets bound Range, not RangeOptions' own cap.
                let opts = RangeOptions {
                    profile: self.profile,
                    stash_type: attr_int(node, "stash_type"),
                    max_elements: usize::MAX,
                };
                ops::range::range_guarded(input(0)?, input(1)?, input(2)?, self.opset, &opts, guard)?
            }
            "Gather" => {
                let indices = input(1)?;
                // The indices are read whole, widened to 16 bytes each, and kept as 8-byte rows.
                guard.before_allocating(indices.len(), indices.len().saturating_mul(24))?;
                let axis = attr_int(node, "axis").unwrap_or(0);
                ops::gather::gather_guarded(input(0)?, indices, axis, self.opset, guard)?
            }
            "Slice" if self.opset < 10 => {
                let ints = |name: &str| attr(node, name).map(|a| a.ints.clone());
                let starts = ints("starts").ok_or_else(|| err(op, "Slice-1 needs the starts attribute"))?;
                let ends = ints("ends").ok_or_else(|| err(op, "Slice-1 needs the ends attribute"))?;
                let axes = ints("axes");
                let args = SliceArgs::Attributes { starts: &starts, ends: &ends, axes: axes.as_deref() };
                ops::slice::slice_guarded(input(0)?, &args, self.opset, self.profile, guard)?
            }
            "Slice" => {
                let args =
                    SliceArgs::Inputs { starts: input(1)?, ends: input(2)?, axes: optional(3), steps: optional(4) };
                // starts, ends, axes and steps are read whole, widened to 16 bytes each.
                let listed: usize = (1..5).filter_map(optional).map(Tensor::len).sum();
                guard.before_allocating(0, listed.saturating_mul(16))?;
                ops::slice::slice_guarded(input(0)?, &args, self.opset, self.profile, guard)?
            }
            other => return Err(err(other, format!("unsupported op {}", shown_op(other)))),
        };
        Ok(vec![Out::New(new)])
    }

    /// ONNX Loop: inputs (M, cond, v_initial...), body (iteration_num, cond_in, v...) ->
    /// (cond_out, v..., scan...), outputs (v_final..., scan outputs stacked along a new axis 0).
    /// Each iteration is charged to the work budget; each scan output is charged to the memory
    /// budget as it accumulates (its stacked copy), so a runaway Loop stops at the budget.
    fn run_loop<'i>(
        &self,
        node: &NodeProto,
        site: &Site<'_>,
        inputs: &[Option<Slot<'i>>],
        scope: &Scope<'_, 'i>,
        guard: &mut NodeGuard<'_>,
    ) -> Result<Vec<Out<'i>>> {
        let body = attr(node, "body")
            .and_then(|a| a.g.as_deref())
            .ok_or_else(|| err("Loop", "the body attribute is missing"))?;
        let tensor = |k: usize| inputs.get(k).and_then(Option::as_ref).map(Slot::tensor);
        let scalar_i64 = |t: &Tensor| -> Result<i64> {
            match (t.dtype(), t.len(), t.code(0)) {
                (DType::Int64, 1, Some(c)) => Ok(c as i64),
                _ => Err(err("Loop", "M must be an int64 scalar")),
            }
        };
        let trip_count = tensor(0).map(scalar_i64).transpose()?;
        let mut condition = match tensor(1) {
            Some(t) if t.dtype() == DType::Bool && t.len() == 1 => t.code(0) != Some(0),
            Some(_) => return Err(err("Loop", "cond must be a bool scalar")),
            None => true,
        };
        let mut carried: Vec<Slot<'i>> = inputs
            .iter()
            .skip(2)
            .map(|t| t.clone().ok_or_else(|| err("Loop", "a loop-carried input is missing")))
            .collect::<Result<_>>()?;
        let body_inputs: Vec<&str> = body.input.iter().map(|i| i.name.as_deref().unwrap_or("")).collect();
        if body_inputs.len() != carried.len() + 2 || body.output.len() < carried.len() + 1 {
            return Err(err("Loop", "the body's inputs and outputs do not match the loop-carried values"));
        }
        // Planning the body costs about a node run per body node, iterations or not.
        self.budget.charge_work(body.node.len() as u64, site)?;
        let plan = Schedule::new(body, &body_inputs, Some(scope), Some(site))?;
        let input_slots: Vec<usize> = body_inputs.iter().map(|name| plan.index[name]).collect();
        let scan_count = plan.outputs.len() - 1 - carried.len();
        let mut scans: Vec<Vec<Slot<'i>>> = vec![Vec::new(); scan_count];
        let mut i: i64 = 0;
        while condition && trip_count.is_none_or(|m| i < m) {
            self.budget.charge_work(NODE_RUN_WORK, site)?;
            let mut values: Vec<Option<Slot<'i>>> = vec![None; plan.names.len()];
            values[input_slots[0]] = Some(self.hold(Tensor::from_codes(DType::Int64, vec![], &[i as u64])?, site)?);
            values[input_slots[1]] =
                Some(self.hold(Tensor::from_codes(DType::Bool, vec![], &[u64::from(condition)])?, site)?);
            for (&k, value) in input_slots[2..].iter().zip(&carried) {
                values[k] = Some(value.clone());
            }
            self.run_graph(body, &plan, &mut values, Some(scope), Some(site))?;
            let body_scope = Scope { plan: &plan, values: &values, outer: Some(scope) };
            let get = |k: usize| {
                let (name, r) = &plan.outputs[k];
                body_scope
                    .resolve(r)
                    .ok_or_else(|| err("Loop", format!("{site}: body output {} was not produced", quoted(name))))
            };
            condition = get(0)?.tensor().code(0).is_some_and(|c| c != 0);
            let next: Vec<Slot<'i>> = (1..=carried.len()).map(get).collect::<Result<_>>()?;
            for (k, parts) in scans.iter_mut().enumerate() {
                let part = get(1 + carried.len() + k)?;
                let bytes = tensor_bytes(part.tensor()) + core::mem::size_of::<Slot<'_>>() as u64;
                guard.before_allocating(part.tensor().len(), usize::try_from(bytes).unwrap_or(usize::MAX))?;
                parts.push(part);
            }
            drop(values);
            carried = next;
            i = i.checked_add(1).ok_or_else(|| err("Loop", format!("{site}: more than 2^63 iterations")))?;
        }
        let carried_count = carried.len();
        let mut outputs: Vec<Out<'i>> = carried.into_iter().map(Out::Same).collect();
        for (k, parts) in scans.into_iter().enumerate() {
            outputs.push(Out::New(stack(&parts, body, 1 + carried_count + k)?));
        }
        Ok(outputs)
    }
}

/// The tensor of a Constant node (`value` or one of the `value_*` attributes).
fn constant(node: &NodeProto) -> Result<Tensor> {
    let a = node.attribute.first().ok_or_else(|| err("Constant", "no value attribute"))?;
    let name = a.name.as_deref().unwrap_or("");
    match name {
        "value" => tensor_from_proto(a.t.as_ref().ok_or_else(|| err("Constant", "value holds no tensor"))?),
        "value_float" => Ok(Tensor::from_f32(&[a.f.unwrap_or(0.0)]).reshape(vec![])?),
        "value_floats" => Ok(Tensor::from_f32(&a.floats)),
        "value_int" => Tensor::from_codes(DType::Int64, vec![], &[a.i.unwrap_or(0) as u64]),
        "value_ints" => {
            Tensor::from_codes(DType::Int64, vec![a.ints.len()], &a.ints.iter().map(|&i| i as u64).collect::<Vec<_>>())
        }
        "value_string" => {
            let s = String::from_utf8(a.s.clone().unwrap_or_default())
                .map_err(|_| err("Constant", "value_string is not UTF-8"))?;
            Tensor::from_strings(vec![], vec![s])
        }
        "value_strings" => {
            let s = a
                .strings
                .iter()
                .map(|b| String::from_utf8(b.clone()).map_err(|_| err("Constant", "value_strings is not UTF-8")))
                .collect::<Result<Vec<_>>>()?;
            Tensor::from_strings(vec![s.len()], s)
        }
        other => Err(err("Constant", format!("unsupported attribute {other}"))),
    }
}

/// Stacks per-iteration scan outputs along a new first axis (the memory was charged as the parts
/// accumulated).
fn stack(parts: &[Slot<'_>], body: &GraphProto, output_index: usize) -> Result<Tensor> {
    let Some(first) = parts.first().map(Slot::tensor) else {
        // No iteration: an empty tensor of the body output's declared type.
        let elem = body
            .output
            .get(output_index)
            .and_then(|o| o.r#type.as_ref())
            .and_then(|t| t.tensor_type.as_ref())
            .and_then(|t| t.elem_type)
            .ok_or_else(|| err("Loop", "zero iterations and the scan output's type is not declared"))?;
        let dtype = DType::from_onnx_number(i64::from(elem))?;
        return if dtype == DType::String {
            Tensor::from_strings(vec![0], vec![])
        } else {
            Tensor::from_raw(dtype, vec![0], Vec::new())
        };
    };
    let mut shape = vec![parts.len()];
    shape.extend_from_slice(first.shape());
    if parts.iter().any(|p| p.tensor().shape() != first.shape() || p.tensor().dtype() != first.dtype()) {
        return Err(err("Loop", "scan outputs change shape or type between iterations"));
    }
    let dtype = first.dtype();
    if dtype == DType::String {
        let all: crate::texts::Texts = parts.iter().filter_map(|p| p.tensor().strings()).flatten().collect();
        return Tensor::from_strings(shape, all);
    }
    let each = first.len();
    let total = element_count(&shape)?;
    let mut raw = ops::zeroed("Loop", packing::raw_len(dtype, total)?)?;
    let part_bytes = packing::raw_len(dtype, each)?;
    let whole_bytes = dtype.bits().is_some_and(|bits| part_bytes as u64 * 8 == each as u64 * u64::from(bits));
    for (k, part) in parts.iter().enumerate() {
        let src = part.tensor().raw().ok_or_else(|| err("Loop", "a scan output has no raw data"))?;
        if whole_bytes {
            raw[k * part_bytes..(k + 1) * part_bytes].copy_from_slice(src);
        } else {
            // Sub-byte elements whose parts do not end on a byte boundary are moved one by one.
            for j in 0..each {
                packing::set(dtype, &mut raw, k * each + j, packing::get(dtype, src, j));
            }
        }
    }
    Tensor::from_raw(dtype, shape, raw)
}
