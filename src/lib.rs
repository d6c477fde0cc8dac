//! mshgltf: MSH (Parkan: Iron Strategy) ⇄ glTF 2.0.
pub mod nres;
pub mod anim;
pub mod msh;
pub mod output;
pub mod source;
pub mod gltf_export;
pub mod material;
pub mod batch;
pub mod convert;
