//! ggml's legacy block types.

use super::Codec;

pub(super) const CODECS: &[Codec] = &[];
