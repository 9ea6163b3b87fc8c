//! ggml's kquants block types.

use super::Codec;

pub(super) const CODECS: &[Codec] = &[];
