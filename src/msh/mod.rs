//! MSH models: the canonical IR ([`ir`]), decoding from an NRes container
//! ([`read`]), encoding back ([`mod@write`]) and validation ([`mod@validate`]).
pub mod build;
pub mod derive;
pub mod error;
pub mod ir;
pub mod read;
pub mod validate;
pub mod write;
pub use error::MshError;
pub use ir::*;
pub use read::{decode, decode_entries, is_model, Decoded, Mode};
pub use validate::validate;
pub use write::encode;
