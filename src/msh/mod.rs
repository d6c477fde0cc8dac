//! MSH models: the canonical IR ([`ir`]), decoding from an NRes container
//! ([`read`]), encoding back ([`write`]) and validation ([`validate`]).
pub mod ir;
pub use ir::*;
