//! Test helper: evaluates an exported GLB the way a glTF viewer does (node
//! TRS, LINEAR translation, slerp rotation, clamped outside the key range)
//! and compares with engine world matrices through the axis change `A`.
#![allow(dead_code)]

use gltf::animation::util::ReadOutputs;

/// Row-major 4x4, column vectors (translation in m[3], m[7], m[11]).
pub type M4 = [f64; 16];

pub fn mul(a: &M4, b: &M4) -> M4 {
    let mut r = [0.0; 16];
    for i in 0..4 {
        for j in 0..4 {
            r[i * 4 + j] = (0..4).map(|k| a[i * 4 + k] * b[k * 4 + j]).sum();
        }
    }
    r
}

/// TRS (glTF rotation [x, y, z, w]) → row-major matrix, column vectors.
pub fn trs(t: [f64; 3], q: [f64; 4]) -> M4 {
    let [x, y, z, w] = q;
    [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        t[0],
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        t[1],
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
        t[2],
        0.0,
        0.0,
        0.0,
        1.0,
    ]
}

/// The Up::Y axis change `A` as a 4x4 and its inverse.
pub fn axis_y() -> (M4, M4) {
    let a = [
        1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    let mut inv = [0.0; 16];
    for i in 0..4 {
        for j in 0..4 {
            inv[i * 4 + j] = a[j * 4 + i];
        }
    }
    (a, inv)
}

struct Chan {
    node: usize,
    rotation: bool,
    times: Vec<f32>,
    values: Vec<[f32; 4]>,
}

/// A parsed GLB ready for world-matrix evaluation.
pub struct Eval {
    pub doc: gltf::Document,
    pub blob: Vec<u8>,
    parent: Vec<Option<usize>>,
    rest: Vec<([f64; 3], [f64; 4])>,
    chans: Vec<Chan>,
}

fn slerp(a: [f64; 4], b: [f64; 4], u: f64) -> [f64; 4] {
    let mut d: f64 = (0..4).map(|k| a[k] * b[k]).sum();
    let mut b = b;
    if d < 0.0 {
        d = -d;
        b = b.map(|c| -c);
    }
    let (wa, wb) = if d > 0.9999995 {
        (1.0 - u, u)
    } else {
        let th = d.acos();
        let s = th.sin();
        (((1.0 - u) * th).sin() / s, (u * th).sin() / s)
    };
    let r = [0, 1, 2, 3].map(|k| wa * a[k] + wb * b[k]);
    let n = r.iter().map(|c| c * c).sum::<f64>().sqrt();
    r.map(|c| c / n)
}

impl Eval {
    pub fn new(glb: &[u8]) -> Eval {
        let g = gltf::Gltf::from_slice(glb).expect("GLB parses and validates (gltf crate)");
        let blob = g.blob.clone().unwrap_or_default();
        let doc = g.document;
        let n = doc.nodes().len();
        let mut parent = vec![None; n];
        let mut rest = Vec::with_capacity(n);
        for node in doc.nodes() {
            for c in node.children() {
                assert!(
                    parent[c.index()].is_none(),
                    "node {} has two parents",
                    c.index()
                );
                parent[c.index()] = Some(node.index());
            }
            let (t, r, s) = node.transform().decomposed();
            assert_eq!(s, [1.0, 1.0, 1.0], "no scale expected");
            rest.push((t.map(f64::from), r.map(f64::from)));
        }
        let mut chans = Vec::new();
        for a in doc.animations() {
            for ch in a.channels() {
                let rd = ch.reader(|_| Some(&blob[..]));
                let times: Vec<f32> = rd.read_inputs().expect("inputs").collect();
                let (rotation, values): (bool, Vec<[f32; 4]>) =
                    match rd.read_outputs().expect("outputs") {
                        ReadOutputs::Translations(t) => {
                            (false, t.map(|v| [v[0], v[1], v[2], 0.0]).collect())
                        }
                        ReadOutputs::Rotations(r) => (true, r.into_f32().collect()),
                        _ => panic!("unexpected channel"),
                    };
                assert_eq!(
                    ch.sampler().interpolation(),
                    gltf::animation::Interpolation::Linear
                );
                assert_eq!(times.len(), values.len());
                chans.push(Chan {
                    node: ch.target().node().index(),
                    rotation,
                    times,
                    values,
                });
            }
        }
        Eval {
            doc,
            blob,
            parent,
            rest,
            chans,
        }
    }

    /// Local TRS of every node at `secs` seconds.
    pub fn locals(&self, secs: f32) -> Vec<([f64; 3], [f64; 4])> {
        let mut l = self.rest.clone();
        for c in &self.chans {
            let n = c.times.len();
            let (i0, i1, u) = if secs <= c.times[0] {
                (0, 0, 0.0)
            } else if secs >= c.times[n - 1] {
                (n - 1, n - 1, 0.0)
            } else {
                let k = c.times.partition_point(|&x| x <= secs) - 1;
                let (t0, t1) = (f64::from(c.times[k]), f64::from(c.times[k + 1]));
                (k, k + 1, (f64::from(secs) - t0) / (t1 - t0))
            };
            let a = c.values[i0].map(f64::from);
            let b = c.values[i1].map(f64::from);
            if c.rotation {
                l[c.node].1 = slerp(a, b, u);
            } else {
                l[c.node].0 = [0, 1, 2].map(|k| a[k] + u * (b[k] - a[k]));
            }
        }
        l
    }

    /// World matrices of every glTF node at `secs` seconds.
    pub fn worlds(&self, secs: f32) -> Vec<M4> {
        let l = self.locals(secs);
        let n = l.len();
        let mut w: Vec<Option<M4>> = vec![None; n];
        fn get(
            i: usize,
            l: &[([f64; 3], [f64; 4])],
            p: &[Option<usize>],
            w: &mut Vec<Option<M4>>,
        ) -> M4 {
            if let Some(m) = w[i] {
                return m;
            }
            let local = trs(l[i].0, l[i].1);
            let m = match p[i] {
                Some(pi) => mul(&get(pi, l, p, w), &local),
                None => local,
            };
            w[i] = Some(m);
            m
        }
        (0..n).map(|i| get(i, &l, &self.parent, &mut w)).collect()
    }
}

/// max |A · W_engine · A⁻¹ − W_gltf| over the given engine matrices
/// (row-major f32) vs glTF nodes 0..engine.len().
pub fn max_error(engine: &[[f32; 16]], gltf_worlds: &[M4]) -> f64 {
    let (a, ai) = axis_y();
    let mut err: f64 = 0.0;
    for (i, we) in engine.iter().enumerate() {
        let we: M4 = we.map(f64::from);
        let expect = mul(&mul(&a, &we), &ai);
        for k in 0..16 {
            err = err.max((expect[k] - gltf_worlds[i][k]).abs());
        }
    }
    err
}
