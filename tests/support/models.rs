//! Small ONNX models built in the tests: nodes, graphs, Loop bodies, tensors.
//! Test files include it with `#[path = "support/models.rs"] mod models;`.

#![allow(dead_code)]

use lowbit::onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto, TensorProto,
    TypeProto, TypeProtoTensor, ValueInfoProto,
};
use lowbit::onnx::tensor_proto::tensor_to_proto;
use lowbit::{DType, Tensor};
use prost::Message;
use std::path::Path;

pub fn value(name: &str) -> ValueInfoProto {
    ValueInfoProto { name: Some(name.into()), ..ValueInfoProto::default() }
}

/// A value with a declared element type (what a Loop scan output needs when it may run zero times).
pub fn typed_value(name: &str, dtype: DType) -> ValueInfoProto {
    let tensor_type = TypeProtoTensor { elem_type: Some(dtype.onnx_number()), shape: None };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { tensor_type: Some(tensor_type), denotation: None }),
        ..ValueInfoProto::default()
    }
}

pub fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        name: Some(name.into()),
        op_type: Some(op.into()),
        ..NodeProto::default()
    }
}

pub fn int_attribute(name: &str, i: i64) -> AttributeProto {
    AttributeProto { name: Some(name.into()), i: Some(i), r#type: Some(2), ..AttributeProto::default() }
}

pub fn tensor_attribute(name: &str, t: TensorProto) -> AttributeProto {
    AttributeProto { name: Some(name.into()), t: Some(t), r#type: Some(4), ..AttributeProto::default() }
}

pub fn graph_attribute(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto { name: Some(name.into()), g: Some(Box::new(g)), r#type: Some(5), ..AttributeProto::default() }
}

pub fn with_attributes(mut n: NodeProto, attributes: Vec<AttributeProto>) -> NodeProto {
    n.attribute = attributes;
    n
}

/// A Cast node to `to`.
pub fn cast(name: &str, input: &str, output: &str, to: DType) -> NodeProto {
    with_attributes(node("Cast", name, &[input], &[output]), vec![int_attribute("to", i64::from(to.onnx_number()))])
}

pub fn graph(nodes: Vec<NodeProto>, inputs: &[&str], outputs: &[&str]) -> GraphProto {
    GraphProto {
        node: nodes,
        input: inputs.iter().map(|n| value(n)).collect(),
        output: outputs.iter().map(|n| value(n)).collect(),
        ..GraphProto::default()
    }
}

pub fn model(graph: GraphProto, opset: i64) -> ModelProto {
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }],
        graph: Some(graph),
        ..ModelProto::default()
    }
}

/// A named TensorProto holding `t`.
pub fn named(t: &Tensor, name: &str) -> TensorProto {
    tensor_to_proto(t, Some(name))
}

pub fn int64s(shape: Vec<usize>, values: &[i64]) -> Tensor {
    Tensor::from_codes(DType::Int64, shape, &values.iter().map(|&v| v as u64).collect::<Vec<_>>()).unwrap()
}

pub fn int64_scalar(v: i64) -> Tensor {
    int64s(vec![], &[v])
}

pub fn bool_scalar(b: bool) -> Tensor {
    Tensor::from_codes(DType::Bool, vec![], &[u64::from(b)]).unwrap()
}

/// A float tensor of `n` elements 0, 1, 2, ...
pub fn floats(n: usize) -> Tensor {
    Tensor::from_f32(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
}

/// A Constant node whose value is `t`.
pub fn constant(name: &str, output: &str, t: &Tensor) -> NodeProto {
    with_attributes(node("Constant", name, &[], &[output]), vec![tensor_attribute("value", named(t, output))])
}

/// A Loop node `name` with trip count input `m`, condition input `cond` (either may be ""),
/// loop-carried inputs and outputs, and a body.
pub fn loop_node(name: &str, m: &str, cond: &str, carried: &[&str], outputs: &[&str], body: GraphProto) -> NodeProto {
    let mut inputs = vec![m, cond];
    inputs.extend_from_slice(carried);
    with_attributes(node("Loop", name, &inputs, outputs), vec![graph_attribute("body", body)])
}

/// A tensor's bytes stored in a file: `data_location = EXTERNAL` and the given key-value pairs.
pub fn external(dtype: DType, dims: &[i64], name: &str, entries: &[(&str, &str)]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(dtype.onnx_number()),
        name: Some(name.into()),
        external_data: entries
            .iter()
            .map(|(k, v)| StringStringEntryProto { key: Some(k.to_string()), value: Some(v.to_string()) })
            .collect(),
        data_location: Some(1),
        ..TensorProto::default()
    }
}

pub fn write_model(path: &Path, m: &ModelProto) {
    std::fs::write(path, m.encode_to_vec()).unwrap();
}

pub fn write_tensor(path: &Path, t: &Tensor) {
    std::fs::write(path, tensor_to_proto(t, None).encode_to_vec()).unwrap();
}
