//! Quantization: tensors of wide floats to narrow codes with scales, and back.
//!
//! * [`mx`]: OCP Microscaling (MX v1.0): MXFP8, MXFP6, MXFP4 and MXINT8, blocks of elements that
//!   share one power-of-two FLOAT8E8M0 scale, laid out as the inputs of an ONNX
//!   `DequantizeLinear` with a float8e8m0 scale and `block_size`.

pub mod mx;
