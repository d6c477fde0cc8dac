//! mshgltf: MSH (Parkan: Iron Strategy) ⇄ glTF 2.0.
pub mod nres;
pub mod anim;
pub mod msh;
