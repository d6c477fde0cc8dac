//! The single binary buffer of an export and the glTF bufferView / accessor
//! records that point into it.
//!
//! Every bufferView starts on a 4-byte boundary (glTF 2.0 §3.6.2.4 requires
//! accessor offsets aligned to the component size; 4 covers f32, u16, u8).

use gltf_json as json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::buffer::{Stride, Target};
use json::validation::{Checked, USize64};
use json::{Index, Root};

/// The model-wide binary buffer under construction.
#[derive(Debug, Default)]
pub struct Bin {
    /// Bytes written so far (always padded to 4 between views).
    pub data: Vec<u8>,
}

impl Bin {
    /// Pads with zeros to the next multiple of 4.
    pub fn align4(&mut self) {
        let pad = (4 - self.data.len() % 4) % 4;
        self.data.extend_from_slice(&[0u8; 3][..pad]);
    }

    /// Starts a view: aligns and returns its byte offset.
    pub fn begin(&mut self) -> usize {
        self.align4();
        self.data.len()
    }

    /// Appends f32 values little-endian.
    pub fn put_f32s(&mut self, v: &[f32]) {
        self.data.reserve(v.len() * 4);
        for x in v {
            self.data.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Adds a bufferView over `bin.data[start..]` (to the current end).
pub fn view(
    root: &mut Root,
    bin: &Bin,
    start: usize,
    stride: Option<usize>,
    target: Option<Target>,
    name: &str,
) -> Index<json::buffer::View> {
    root.push(json::buffer::View {
        buffer: Index::new(0),
        byte_length: USize64(bin.data.len().saturating_sub(start) as u64),
        byte_offset: Some(USize64(start as u64)),
        byte_stride: stride.map(Stride),
        name: Some(name.to_string()),
        target: target.map(Checked::Valid),
        extensions: None,
        extras: None,
    })
}

/// Everything that describes one accessor.
pub struct AccessorSpec<'a> {
    /// The bufferView.
    pub view: Index<json::buffer::View>,
    /// Byte offset inside the view.
    pub offset: usize,
    /// Element count.
    pub count: usize,
    /// Component type.
    pub component: ComponentType,
    /// Element type.
    pub ty: Type,
    /// Per-component minimum (written as given).
    pub min: Option<&'a [f32]>,
    /// Per-component maximum.
    pub max: Option<&'a [f32]>,
}

/// Adds an accessor.
pub fn accessor(root: &mut Root, s: AccessorSpec<'_>) -> Index<json::Accessor> {
    let to_value =
        |v: &[f32]| serde_json::Value::from(v.iter().map(|&x| json_f32(x)).collect::<Vec<_>>());
    root.push(json::Accessor {
        buffer_view: Some(s.view),
        byte_offset: if s.offset == 0 {
            None
        } else {
            Some(USize64(s.offset as u64))
        },
        count: USize64(s.count as u64),
        component_type: Checked::Valid(GenericComponentType(s.component)),
        extensions: None,
        extras: None,
        type_: Checked::Valid(s.ty),
        min: s.min.map(to_value),
        max: s.max.map(to_value),
        name: None,
        normalized: false,
        sparse: None,
    })
}

/// An f32 as a JSON number: its exact f64 widening, so that a reader
/// comparing in f64 or in f32 sees the very value stored in the buffer
/// (the validator's min/max check is exact). Non-finite values become null.
pub fn json_f32(x: f32) -> serde_json::Value {
    serde_json::Number::from_f64(f64::from(x))
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}
