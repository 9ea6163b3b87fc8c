//! A small graph runner for models made of Cast, CastLike, Range, Slice, Gather, Constant and
//! Identity, plus what Range's function body uses (Sub, Div, Ceil, Relu, Add and Loop), so that the
//! `_expanded` node tests run the body the spec gives. Nodes run in dependency order; each node sees
//! the opset version of its domain and its own attributes. Anything else is an error naming the op.

use super::proto::{AttributeProto, GraphProto, ModelProto, NodeProto};
use super::tensor_proto::tensor_from_proto;
use crate::cast::{cast_like_op, cast_op, CastAttributes, CastTo};
use crate::convert::{decode_element, Element};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format;
use crate::ops::{self, range::RangeOptions, slice::SliceArgs};
use crate::profile::Profile;
use crate::round::{self, RoundingOptions};
use crate::tensor::{element_count, Tensor};
use crate::value::Value;
use prost::Message;
use std::collections::HashMap;
use std::path::Path;

/// The most elements a broadcast may produce: checked before allocating.
pub const MAX_ELEMENTS: usize = 1 << 31;

/// The most iterations a Loop may run. Each iteration runs a subgraph, so a model whose
/// condition never turns false would otherwise hang the runner; 2^24 is far beyond what the
/// Range function body needs for any output that fits in memory at this speed.
pub const MAX_LOOP_ITERATIONS: i64 = 1 << 24;

fn err(op: &str, message: impl Into<String>) -> Error {
    Error::InvalidOp { op: op.into(), message: message.into() }
}

/// A loaded model: its graph and the opset version of the default domain.
#[derive(Clone, Debug)]
pub struct Model {
    pub graph: GraphProto,
    pub opset: i64,
}

impl Model {
    /// Parses a serialized `ModelProto`.
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

    /// Reads a `.onnx` file.
    pub fn load(path: &Path) -> Result<Model> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Model::from_bytes(&bytes).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })
    }

    /// The names of the graph inputs that are not initializers, in order.
    #[must_use]
    pub fn input_names(&self) -> Vec<String> {
        let init: Vec<&str> = self.graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
        self.graph.input.iter().filter_map(|i| i.name.clone()).filter(|n| !init.contains(&n.as_str())).collect()
    }

    /// The names of the graph outputs, in order.
    #[must_use]
    pub fn output_names(&self) -> Vec<String> {
        self.graph.output.iter().filter_map(|o| o.name.clone()).collect()
    }

    /// Runs the graph on named inputs and returns the outputs in graph order.
    pub fn run(&self, inputs: &HashMap<String, Tensor>, profile: Profile) -> Result<Vec<(String, Tensor)>> {
        let expected = self.input_names();
        for name in inputs.keys() {
            if !expected.contains(name) {
                return Err(err("run", format!("the model has no input named {name:?}; its inputs: {expected:?}")));
            }
        }
        for name in &expected {
            if !inputs.contains_key(name) {
                return Err(err("run", format!("missing input {name:?}")));
            }
        }
        let runner = Runner { opset: self.opset, profile };
        let mut scope: HashMap<String, Tensor> = inputs.clone();
        runner.run_graph(&self.graph, &mut scope, None)?;
        self.output_names()
            .into_iter()
            .map(|name| {
                let t =
                    scope.get(&name).cloned().ok_or_else(|| err("run", format!("output {name:?} was not produced")))?;
                Ok((name, t))
            })
            .collect()
    }
}

struct Runner {
    opset: i64,
    profile: Profile,
}

/// Values visible to a graph: its own, then its enclosing graph's (a Loop body reads outer values).
struct Scope<'a> {
    local: &'a HashMap<String, Tensor>,
    outer: Option<&'a Scope<'a>>,
}

impl Scope<'_> {
    fn get(&self, name: &str) -> Option<&Tensor> {
        self.local.get(name).or_else(|| self.outer.and_then(|o| o.get(name)))
    }
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

impl Runner {
    fn run_graph(
        &self,
        graph: &GraphProto,
        values: &mut HashMap<String, Tensor>,
        outer: Option<&Scope<'_>>,
    ) -> Result<()> {
        for init in &graph.initializer {
            let name = init.name.clone().unwrap_or_default();
            values.insert(name, tensor_from_proto(init)?);
        }
        // Dependency order: run any node whose inputs are all available, until none is left.
        let mut pending: Vec<&NodeProto> = graph.node.iter().collect();
        while !pending.is_empty() {
            let ready = pending.iter().position(|node| {
                node.input
                    .iter()
                    .all(|i| i.is_empty() || values.contains_key(i) || outer.is_some_and(|o| o.get(i).is_some()))
            });
            let Some(index) = ready else {
                let node = pending[0];
                let missing: Vec<&String> = node
                    .input
                    .iter()
                    .filter(|i| !i.is_empty() && !values.contains_key(*i) && outer.is_none_or(|o| o.get(i).is_none()))
                    .collect();
                return Err(err(
                    op_name(node),
                    format!("inputs {missing:?} are never produced (a cycle or a missing value)"),
                ));
            };
            let node = pending.remove(index);
            let scope = Scope { local: values, outer };
            let inputs: Vec<Option<Tensor>> =
                node.input.iter().map(|i| if i.is_empty() { None } else { scope.get(i).cloned() }).collect();
            let outputs = self.run_node(node, &inputs, &scope)?;
            for (name, t) in node.output.iter().zip(outputs) {
                if !name.is_empty() {
                    values.insert(name.clone(), t);
                }
            }
        }
        Ok(())
    }

    fn run_node(&self, node: &NodeProto, inputs: &[Option<Tensor>], scope: &Scope<'_>) -> Result<Vec<Tensor>> {
        let op = op_name(node);
        if !matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx")) {
            return Err(err(op, format!("unsupported op {}::{op}", node.domain.as_deref().unwrap_or(""))));
        }
        let input = |k: usize| -> Result<&Tensor> {
            inputs.get(k).and_then(Option::as_ref).ok_or_else(|| err(op, format!("input {k} is missing")))
        };
        let one = |t: Tensor| Ok(vec![t]);
        match op {
            "Identity" => one(input(0)?.clone()),
            "Constant" => one(constant(node)?),
            "Cast" => {
                let to = match attr(node, "to") {
                    Some(a) if a.s.is_some() => Some(CastTo::Name(attr_string(node, "to")?.unwrap_or_default())),
                    Some(a) => a.i.map(CastTo::Number),
                    None => None,
                };
                let attrs = CastAttributes {
                    to,
                    saturate: attr_int(node, "saturate"),
                    round_mode: attr_string(node, "round_mode")?,
                };
                one(cast_op(input(0)?, &attrs, self.opset, self.profile)?)
            }
            "CastLike" => {
                let round_mode = attr_string(node, "round_mode")?;
                let saturate = attr_int(node, "saturate");
                one(cast_like_op(input(0)?, input(1)?, saturate, round_mode.as_deref(), self.opset, self.profile)?)
            }
            "Add" | "Sub" | "Div" => one(binary(op, input(0)?, input(1)?)?),
            "Ceil" | "Relu" => one(unary(op, input(0)?)?),
            "Loop" => self.run_loop(node, inputs, scope),
            other => self.run_data_op(other, node, inputs),
        }
    }

    /// ONNX Loop: inputs (M, cond, v_initial...), body (iteration_num, cond_in, v...) ->
    /// (cond_out, v..., scan...), outputs (v_final..., scan outputs stacked along a new axis 0).
    fn run_loop(&self, node: &NodeProto, inputs: &[Option<Tensor>], scope: &Scope<'_>) -> Result<Vec<Tensor>> {
        let body = attr(node, "body")
            .and_then(|a| a.g.as_deref())
            .ok_or_else(|| err("Loop", "the body attribute is missing"))?;
        let scalar_i64 = |t: &Tensor| -> Result<i64> {
            match (t.dtype(), t.len(), t.code(0)) {
                (DType::Int64, 1, Some(c)) => Ok(c as i64),
                _ => Err(err("Loop", "M must be an int64 scalar")),
            }
        };
        let trip_count = inputs.first().and_then(Option::as_ref).map(scalar_i64).transpose()?;
        let mut condition = match inputs.get(1).and_then(Option::as_ref) {
            Some(t) if t.dtype() == DType::Bool && t.len() == 1 => t.code(0) != Some(0),
            Some(_) => return Err(err("Loop", "cond must be a bool scalar")),
            None => true,
        };
        let mut carried: Vec<Tensor> = inputs
            .iter()
            .skip(2)
            .map(|t| t.clone().ok_or_else(|| err("Loop", "a loop-carried input is missing")))
            .collect::<Result<_>>()?;
        let body_inputs: Vec<String> = body.input.iter().map(|i| i.name.clone().unwrap_or_default()).collect();
        let body_outputs: Vec<String> = body.output.iter().map(|o| o.name.clone().unwrap_or_default()).collect();
        if body_inputs.len() != carried.len() + 2 || body_outputs.len() < carried.len() + 1 {
            return Err(err("Loop", "the body's inputs and outputs do not match the loop-carried values"));
        }
        let scan_count = body_outputs.len() - 1 - carried.len();
        let mut scans: Vec<Vec<Tensor>> = vec![Vec::new(); scan_count];
        let mut i: i64 = 0;
        while condition && trip_count.is_none_or(|m| i < m) {
            if i >= MAX_LOOP_ITERATIONS {
                return Err(err("Loop", format!("more than {MAX_LOOP_ITERATIONS} iterations")));
            }
            let mut local = HashMap::new();
            local.insert(body_inputs[0].clone(), Tensor::from_codes(DType::Int64, vec![], &[i as u64])?);
            local.insert(body_inputs[1].clone(), Tensor::from_codes(DType::Bool, vec![], &[u64::from(condition)])?);
            for (name, value) in body_inputs[2..].iter().zip(&carried) {
                local.insert(name.clone(), value.clone());
            }
            self.run_graph(body, &mut local, Some(scope))?;
            let get = |name: &String| {
                local.get(name).cloned().ok_or_else(|| err("Loop", format!("body output {name:?} not produced")))
            };
            let cond_out = get(&body_outputs[0])?;
            condition = cond_out.code(0).is_some_and(|c| c != 0);
            carried = body_outputs[1..=carried.len()].iter().map(get).collect::<Result<_>>()?;
            for (k, name) in body_outputs[1 + carried.len()..].iter().enumerate() {
                scans[k].push(get(name)?);
            }
            i += 1;
        }
        let carried_count = carried.len();
        let mut outputs = carried;
        for (k, parts) in scans.into_iter().enumerate() {
            outputs.push(stack(&parts, body, 1 + carried_count + k)?);
        }
        Ok(outputs)
    }

    /// Range, Slice and Gather: shape logic in [`crate::ops`].
    fn run_data_op(&self, op: &str, node: &NodeProto, inputs: &[Option<Tensor>]) -> Result<Vec<Tensor>> {
        let input = |k: usize| -> Result<&Tensor> {
            inputs.get(k).and_then(Option::as_ref).ok_or_else(|| err(op, format!("input {k} is missing")))
        };
        let optional = |k: usize| inputs.get(k).and_then(Option::as_ref);
        let out = match op {
            "Range" => {
                let opts = RangeOptions {
                    profile: self.profile,
                    stash_type: attr_int(node, "stash_type"),
                    ..RangeOptions::default()
                };
                ops::range::range_with(input(0)?, input(1)?, input(2)?, self.opset, &opts)?
            }
            "Gather" => ops::gather::gather(
                input(0)?,
                input(1)?,
                attr_int(node, "axis").unwrap_or(0),
                self.opset,
                self.profile,
            )?,
            "Slice" if self.opset < 10 => {
                let ints = |name: &str| attr(node, name).map(|a| a.ints.clone());
                let starts = ints("starts").ok_or_else(|| err(op, "Slice-1 needs the starts attribute"))?;
                let ends = ints("ends").ok_or_else(|| err(op, "Slice-1 needs the ends attribute"))?;
                let axes = ints("axes");
                let args = SliceArgs::Attributes { starts: &starts, ends: &ends, axes: axes.as_deref() };
                ops::slice::slice(input(0)?, &args, self.opset, self.profile)?
            }
            "Slice" => {
                let args =
                    SliceArgs::Inputs { starts: input(1)?, ends: input(2)?, axes: optional(3), steps: optional(4) };
                ops::slice::slice(input(0)?, &args, self.opset, self.profile)?
            }
            other => return Err(err(other, format!("unsupported op {other}"))),
        };
        Ok(vec![out])
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

/// Stacks per-iteration scan outputs along a new first axis.
fn stack(parts: &[Tensor], body: &GraphProto, output_index: usize) -> Result<Tensor> {
    let Some(first) = parts.first() else {
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
            Tensor::from_codes(dtype, vec![0], &[])
        };
    };
    let mut shape = vec![parts.len()];
    shape.extend_from_slice(first.shape());
    if parts.iter().any(|p| p.shape() != first.shape() || p.dtype() != first.dtype()) {
        return Err(err("Loop", "scan outputs change shape or type between iterations"));
    }
    if first.dtype() == DType::String {
        let all: Vec<String> = parts.iter().flat_map(|p| p.strings().unwrap_or(&[]).to_vec()).collect();
        return Tensor::from_strings(shape, all);
    }
    let codes: Vec<u64> = parts.iter().map(Tensor::codes).collect::<Result<Vec<_>>>()?.concat();
    Tensor::from_codes(first.dtype(), shape, &codes)
}

/// numpy broadcasting of two shapes.
fn broadcast_shape(op: &str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| if i + s.len() >= rank { s[i + s.len() - rank] } else { 1 };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            (x, y) => Err(err(op, format!("shapes {a:?} and {b:?} do not broadcast (axis {i}: {x} vs {y})"))),
        })
        .collect()
}

/// The flat index into `shape` (right-aligned, size-1 axes repeated) of output index `flat` of `out`.
fn source_index(flat: usize, out: &[usize], shape: &[usize]) -> usize {
    let mut rest = flat;
    let mut index = 0;
    let mut stride = 1;
    for (axis, &d) in out.iter().enumerate().rev() {
        let coordinate = rest % d;
        rest /= d;
        let offset = axis + shape.len();
        if offset >= out.len() {
            let s = shape[offset - out.len()];
            if s != 1 {
                index += coordinate * stride;
            }
            stride *= s;
        }
    }
    index
}

/// A number for arithmetic: floats exactly as `f64` (every format here fits), integers as `i128`.
#[derive(Clone, Copy)]
enum Number {
    Float(f64),
    Int(i128),
}

fn number(dtype: DType, code: u64) -> Result<Number> {
    Ok(match decode_element(dtype, code)? {
        Element::Float(v) => Number::Float(f64::from_bits(round::encode(&format::F64, v, RoundingOptions::IEEE))),
        Element::Int(i) => Number::Int(i),
        Element::Bool(b) => Number::Int(i128::from(b)),
    })
}

/// Rounds a result once into the dtype. Arithmetic on float32 and narrower operands computed in
/// f64 and then rounded is correctly rounded (f64 carries more than twice their precision plus
/// two bits), so this equals the IEEE operation in the operand type.
fn encode_number(dtype: DType, n: Number) -> u64 {
    match (dtype.kind(), n) {
        (Kind::Float(f), Number::Float(x)) => round::encode(f, Value::from_f64(x), RoundingOptions::IEEE),
        (Kind::Integer { bits, .. }, Number::Int(i)) => {
            (i as u64) & if bits >= 64 { u64::MAX } else { (1 << bits) - 1 }
        }
        (Kind::Bool, Number::Int(i)) => u64::from(i != 0),
        _ => unreachable!("numbers match their dtype"),
    }
}

fn numeric(op: &str, dtype: DType) -> Result<()> {
    match dtype.kind() {
        Kind::Float(_) | Kind::Integer { .. } => Ok(()),
        _ => Err(err(op, format!("does not take {dtype}"))),
    }
}

fn binary(op: &str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(err(op, format!("operands have different types {} and {}", a.dtype(), b.dtype())));
    }
    let dtype = a.dtype();
    numeric(op, dtype)?;
    let shape = broadcast_shape(op, a.shape(), b.shape())?;
    let n = element_count(&shape)?;
    if n > MAX_ELEMENTS {
        return Err(err(op, format!("the result would have {n} elements")));
    }
    let (ca, cb) = (a.codes()?, b.codes()?);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = number(dtype, ca[source_index(i, &shape, a.shape())])?;
        let y = number(dtype, cb[source_index(i, &shape, b.shape())])?;
        let r = match (x, y) {
            (Number::Float(x), Number::Float(y)) => Number::Float(match op {
                "Add" => x + y,
                "Sub" => x - y,
                _ => x / y,
            }),
            (Number::Int(x), Number::Int(y)) => Number::Int(match op {
                "Add" => x + y,
                "Sub" => x - y,
                _ if y == 0 => return Err(err(op, format!("integer division by zero at element {i}"))),
                // Integer Div truncates toward zero (C semantics, as onnxruntime and the reference).
                _ => x / y,
            }),
            _ => unreachable!("same dtype"),
        };
        out.push(encode_number(dtype, r));
    }
    Tensor::from_codes(dtype, shape, &out)
}

fn unary(op: &str, a: &Tensor) -> Result<Tensor> {
    let dtype = a.dtype();
    numeric(op, dtype)?;
    let out = a
        .codes()?
        .into_iter()
        .map(|c| {
            let r = match (op, number(dtype, c)?) {
                ("Ceil", Number::Float(x)) => Number::Float(x.ceil()),
                ("Ceil", Number::Int(_)) => return Err(err(op, format!("does not take {dtype}"))),
                (_, Number::Float(x)) => Number::Float(if x < 0.0 { 0.0 } else { x }),
                (_, Number::Int(i)) => Number::Int(i.max(0)),
            };
            Ok(encode_number(dtype, r))
        })
        .collect::<Result<Vec<_>>>()?;
    Tensor::from_codes(dtype, a.shape().to_vec(), &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shape("Add", &[2, 3], &[3]).unwrap(), [2, 3]);
        assert_eq!(broadcast_shape("Add", &[], &[4]).unwrap(), [4]);
        assert!(broadcast_shape("Add", &[2, 3], &[2]).is_err());
        let a = Tensor::from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape(vec![2, 3]).unwrap();
        let b = Tensor::from_f32(&[10.0, 20.0, 30.0]);
        assert_eq!(binary("Add", &a, &b).unwrap().to_f32_vec().unwrap(), [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
        let c = Tensor::from_f32(&[2.0, 4.0]).reshape(vec![2, 1]).unwrap();
        assert_eq!(binary("Div", &a, &c).unwrap().to_f32_vec().unwrap(), [0.5, 1.0, 1.5, 1.0, 1.25, 1.5]);
    }

    #[test]
    fn float32_arithmetic_is_ieee() {
        let a = Tensor::from_f32(&[0.1, 3e38, 1.0]);
        let b = Tensor::from_f32(&[0.2, 3e38, 3.0]);
        let sum = binary("Add", &a, &b).unwrap().to_f32_vec().unwrap();
        assert_eq!(sum[0], 0.1f32 + 0.2f32);
        assert_eq!(sum[1], f32::INFINITY);
        assert_eq!(binary("Div", &a, &b).unwrap().to_f32_vec().unwrap()[2], 1.0f32 / 3.0);
        assert_eq!(unary("Ceil", &Tensor::from_f32(&[-0.5, 2.1])).unwrap().to_f32_vec().unwrap(), [-0.0, 3.0]);
        assert_eq!(unary("Relu", &Tensor::from_f32(&[-3.0, 2.0])).unwrap().to_f32_vec().unwrap(), [0.0, 2.0]);
    }
}
