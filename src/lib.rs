//! mshgltf: MSH (Parkan: Iron Strategy) ⇄ glTF 2.0.
#![warn(missing_docs)]
pub mod anim;
pub mod batch;
pub mod convention;
pub mod convert;
pub mod gltf2msh;
pub mod gltf_export;
pub mod gltf_import;
pub mod limits;
pub mod material;
pub mod mission;
pub mod models;
pub mod msh;
pub mod msh2gltf;
pub mod nres;
pub mod output;
pub mod run;
pub mod source;
pub mod terrain;
pub mod unit;
