//! Unit files built in code (unit-files-notes §3.3), for the tests that
//! assemble units without `../shared`.

/// A 32-byte NUL-padded name field.
pub fn name32(s: &str) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..s.len()].copy_from_slice(s.as_bytes());
    b
}

/// A unit file (unit-files-notes §3.3): (record, attach, class, children)
/// per component, each record found in `objects.rlb`.
pub fn dat(components: &[(&str, i32, u32, i32)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xF0F1u32.to_le_bytes());
    out.extend_from_slice(&0x0100_8000u32.to_le_bytes());
    for &(record, attach, class, children) in components {
        out.extend_from_slice(&name32("objects.rlb"));
        out.extend_from_slice(&name32(record));
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&attach.to_le_bytes());
        out.extend_from_slice(&name32(record));
        out.extend_from_slice(&class.to_le_bytes());
        out.extend_from_slice(&children.to_le_bytes());
    }
    out
}

/// The bytes of an `objects.rlb` (unit-files-notes §3.2): one record per
/// name in `records`, each naming entry `{record}.msh` of the part archive
/// `archive` (a file name beside it).
pub fn objects_rlb(archive: &str, records: &[&str]) -> Vec<u8> {
    use mshgltf::nres;
    let slots: Vec<Vec<u8>> = records
        .iter()
        .map(|r| {
            let mut s = name32(archive).to_vec();
            s.extend_from_slice(&name32(&format!("{r}.msh")));
            s
        })
        .collect();
    let recs: Vec<nres::Entry> = slots
        .iter()
        .zip(records)
        .map(|(s, r)| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: r.as_bytes(),
            data: s,
        })
        .collect();
    nres::write(&recs).unwrap()
}

/// Writes [`objects_rlb`] as `dir/objects.rlb`.
pub fn write_objects_rlb(dir: &std::path::Path, archive: &str, records: &[&str]) {
    std::fs::write(dir.join("objects.rlb"), objects_rlb(archive, records)).unwrap();
}
