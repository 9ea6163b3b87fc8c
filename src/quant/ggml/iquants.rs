//! ggml's iquants block types.

use super::Codec;

pub(super) const CODECS: &[Codec] = &[];
