//! A skinned model on the CPU: its node hierarchy with rest transforms,
//! its joints (node and inverse bind matrix), one merged triangle mesh
//! whose vertices name up to four joints with weights, and its animation
//! clips. Loaded from glTF 2.0 (.glb, or .gltf with external buffers beside
//! it) or built in code ([`super::creature`]).

use std::path::Path;

use glam::{Mat4, Quat, Vec3};

use super::anim::Clip;
use super::clips::read_clip;
pub use super::material::Material;
use crate::base::opener::{self, OpenError};

/// Most joints a model may have (the bone buffer's size).
pub const MAX_JOINTS: usize = 1024;

/// Most nodes a model may have: characters have hundreds.
pub const MAX_NODES: usize = 65_536;

/// How deep a node may sit below its root (a character's deepest bones
/// are a few dozen down).
pub const MAX_DEPTH: usize = 256;

/// Largest model file read.
const MAX_MODEL_BYTES: u64 = 512 << 20;

/// A translation, rotation and scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    /// Translation.
    pub translation: Vec3,
    /// Rotation.
    pub rotation: Quat,
    /// Scale per axis.
    pub scale: Vec3,
}

impl Default for Trs {
    fn default() -> Self {
        Self {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
        }
    }
}

impl Trs {
    /// The matrix `T * R * S`.
    pub fn matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// `self` moved `amount` (0..1) of the way to `other`: lerped
    /// translation and scale, slerped rotation.
    pub fn blend(&self, other: &Trs, amount: f32) -> Trs {
        Trs {
            translation: self.translation.lerp(other.translation, amount),
            rotation: self.rotation.slerp(other.rotation, amount),
            scale: self.scale.lerp(other.scale, amount),
        }
    }
}

/// A node of the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Its name, or `node N`.
    pub name: String,
    /// Its parent, if any.
    pub parent: Option<usize>,
    /// Its local transform when no clip moves it.
    pub rest: Trs,
}

/// A joint vertices are bound to: a node and the inverse of its bind pose.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// The node that moves it.
    pub node: usize,
    /// Model space to the joint's space at bind time.
    pub inverse_bind: Mat4,
}

/// One vertex of the merged mesh, in bind pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vertex {
    /// Position.
    pub position: Vec3,
    /// Unit normal.
    pub normal: Vec3,
    /// Joints (indices into [`Model::joints`]).
    pub joints: [u32; 4],
    /// Their weights, summing to 1.
    pub weights: [f32; 4],
    /// Its surface.
    pub material: Material,
}

/// What `sylva asset` prints of a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshSummary {
    /// Mesh name.
    pub name: String,
    /// Vertices it adds.
    pub vertices: usize,
    /// Triangles it adds.
    pub triangles: usize,
    /// Whether a skin moves it (else its node does).
    pub skinned: bool,
}

/// A model ready to animate and skin.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The file or generator it came from.
    pub source: String,
    /// Every node.
    pub nodes: Vec<Node>,
    /// The nodes with each parent before its children ([`hierarchy_order`]).
    pub order: Vec<usize>,
    /// Every joint vertices name.
    pub joints: Vec<Joint>,
    /// All triangles of all meshes.
    pub vertices: Vec<Vertex>,
    /// Three per triangle.
    pub indices: Vec<u32>,
    /// Its animations.
    pub clips: Vec<Clip>,
    /// Per mesh, for `sylva asset`.
    pub meshes: Vec<MeshSummary>,
}

/// Why a model could not be used; the running one stays.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file (or a buffer beside it) could not be read: missing, a
    /// link, a FIFO, a device.
    #[error(transparent)]
    Refused(#[from] OpenError),
    /// The file is larger than a model may be.
    #[error("{file}: {bytes} bytes; a model may be at most {MAX_MODEL_BYTES}")]
    TooLarge {
        /// The file.
        file: String,
        /// Its size.
        bytes: u64,
    },
    /// Not glTF, truncated, or with data the reader cannot take.
    #[error("{file}: not a readable glTF 2.0 file ({reason})")]
    Gltf {
        /// The file.
        file: String,
        /// What gltf said.
        reason: Box<gltf::Error>,
    },
    /// A buffer names a file outside the model's folder.
    #[error("{file}: buffer {uri:?} is not a file beside the model")]
    OutsideFolder {
        /// The file.
        file: String,
        /// The URI.
        uri: String,
    },
    /// An animation that cannot be read.
    #[error("{file}: {error}")]
    Clip {
        /// The file.
        file: String,
        /// What is wrong.
        error: super::clips::ClipError,
    },
    /// Something the layer needs is missing or malformed.
    #[error("{file}: {problem}")]
    Content {
        /// The file.
        file: String,
        /// What is wrong.
        problem: String,
    },
}

impl Model {
    /// Reads a `.glb` or `.gltf` file at a path a person typed (or a
    /// test's): the file and its buffers opened as [`Model::load_in`]
    /// opens them inside its folder.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        let name = path.file_name().map(Path::new).unwrap_or(path);
        Self::load_in(folder.unwrap_or(Path::new(".")), name)
    }

    /// Reads the `.glb` or `.gltf` file `relative` under `root` through
    /// the opener (no link on the way, a plain file, within
    /// [`MAX_MODEL_BYTES`]). Buffers of a `.gltf` must be data URIs or
    /// plain files in the same folder, opened the same way.
    pub fn load_in(root: &Path, relative: &Path) -> Result<Self, ModelError> {
        let file = root.join(relative).display().to_string();
        let data = opener::read(root, relative, MAX_MODEL_BYTES).map_err(|e| match e {
            OpenError::TooLarge { bytes, .. } => ModelError::TooLarge {
                file: file.clone(),
                bytes,
            },
            other => ModelError::Refused(other),
        })?;
        let gltf = parsed(&file, &data)?;
        let beside = relative.parent().unwrap_or(Path::new(""));
        let mut external = 0u64;
        for buffer in gltf.document.buffers() {
            if let gltf::buffer::Source::Uri(uri) = buffer.source()
                && !uri.starts_with("data:")
            {
                if crate::base::inside_show(uri).is_err() || uri.contains('/') || uri.contains('\\')
                {
                    return Err(ModelError::OutsideFolder {
                        file,
                        uri: uri.to_string(),
                    });
                }
                // Looked at through the opener before gltf reads it: a
                // plain file beside the model, all of them within the cap.
                let opened = opener::open(root, &beside.join(uri), MAX_MODEL_BYTES)?;
                external += opened.size;
                if external > MAX_MODEL_BYTES {
                    return Err(ModelError::TooLarge {
                        file,
                        bytes: external,
                    });
                }
            }
        }
        let buffers =
            gltf::import_buffers(&gltf.document, Some(&root.join(beside)), gltf.blob.clone())
                .map_err(|reason| ModelError::Gltf {
                    file: file.clone(),
                    reason: Box::new(reason),
                })?;
        from_document(&file, &gltf.document, &buffers)
    }

    /// Reads a `.glb` held in memory (the built-in dancer), named `file`
    /// in messages: all its buffers must be inside it.
    pub fn from_glb(file: &str, data: &[u8]) -> Result<Self, ModelError> {
        let gltf = parsed(file, data)?;
        let outside = gltf.document.buffers().any(|buffer| {
            matches!(buffer.source(), gltf::buffer::Source::Uri(uri) if !uri.starts_with("data:"))
        });
        if outside {
            return Err(content(file, "a buffer outside the file"));
        }
        let buffers =
            gltf::import_buffers(&gltf.document, None, gltf.blob.clone()).map_err(|reason| {
                ModelError::Gltf {
                    file: file.to_string(),
                    reason: Box::new(reason),
                }
            })?;
        from_document(file, &gltf.document, &buffers)
    }

    /// The model itself if a skin moves any of its meshes; the layer grows
    /// inside skinned characters only.
    pub fn skinned(self) -> Result<Self, ModelError> {
        if self.meshes.iter().any(|m| m.skinned) {
            Ok(self)
        } else {
            Err(content(
                &self.source,
                "no skinned mesh (no skin with JOINTS_0/WEIGHTS_0): the layer grows inside a skinned character",
            ))
        }
    }

    /// The index of the clip called `name`, or numbered `name`.
    pub fn clip_index(&self, name: &str) -> Option<usize> {
        self.clips
            .iter()
            .position(|c| c.name == name)
            .or_else(|| name.parse().ok().filter(|i| *i < self.clips.len()))
    }

    /// The bind-pose bounding box of the mesh.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        self.vertices.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(lo, hi), v| (lo.min(v.position), hi.max(v.position)),
        )
    }

    /// The bind-pose mesh's largest extent.
    pub fn size(&self) -> f32 {
        let (lo, hi) = self.bounds();
        (hi - lo).max_element().max(1e-6)
    }
}

/// The nodes in an order where each parent comes before its children, or
/// why there is none: more than [`MAX_NODES`], a parent that is not a
/// node, a node deeper than [`MAX_DEPTH`], or a cycle. Found once, so a
/// frame's pose is one pass whatever order the file stored the nodes in.
pub fn hierarchy_order(nodes: &[Node]) -> Result<Vec<usize>, String> {
    if nodes.len() > MAX_NODES {
        return Err(format!("{} nodes; at most {MAX_NODES}", nodes.len()));
    }
    let mut children = vec![Vec::new(); nodes.len()];
    let mut stack = Vec::new();
    for (index, node) in nodes.iter().enumerate() {
        match node.parent {
            None => stack.push((index, 1)),
            Some(parent) if parent < nodes.len() => children[parent].push(index),
            Some(parent) => {
                return Err(format!(
                    "node {index} names parent {parent}, past the nodes"
                ));
            }
        }
    }
    let mut order = Vec::with_capacity(nodes.len());
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(format!(
                "node {:?} sits {depth} levels deep; at most {MAX_DEPTH}",
                nodes[node].name
            ));
        }
        order.push(node);
        stack.extend(children[node].iter().map(|&child| (child, depth + 1)));
    }
    if order.len() < nodes.len() {
        return Err(format!(
            "{} nodes are their own ancestors (the hierarchy has a cycle)",
            nodes.len() - order.len()
        ));
    }
    Ok(order)
}

/// Whether every accessor fits inside its buffer view, as the file claims
/// (a count beyond its view would read past it, or be cut short quietly).
fn check_accessors(file: &str, document: &gltf::Document) -> Result<(), ModelError> {
    for accessor in document.accessors() {
        let Some(view) = accessor.view() else {
            continue;
        };
        let element = accessor.size();
        let stride = view.stride().unwrap_or(element);
        let needed = accessor
            .count()
            .checked_sub(1)
            .map_or(Some(0), |last| last.checked_mul(stride))
            .and_then(|span| span.checked_add(element))
            .and_then(|span| span.checked_add(accessor.offset()));
        if accessor.count() > 0 && needed.is_none_or(|n| n > view.length()) {
            return Err(content(
                file,
                format!(
                    "accessor {} claims {} elements, more than its buffer view of {} bytes holds",
                    accessor.index(),
                    accessor.count(),
                    view.length()
                ),
            ));
        }
    }
    Ok(())
}

/// `data` parsed as glTF, or why not.
fn parsed(file: &str, data: &[u8]) -> Result<gltf::Gltf, ModelError> {
    gltf::Gltf::from_slice(data).map_err(|reason| ModelError::Gltf {
        file: file.to_string(),
        reason: Box::new(reason),
    })
}

fn content(file: &str, problem: impl Into<String>) -> ModelError {
    ModelError::Content {
        file: file.to_string(),
        problem: problem.into(),
    }
}

/// Builds a model from a parsed document and its buffers.
fn from_document(
    file: &str,
    document: &gltf::Document,
    buffers: &[gltf::buffer::Data],
) -> Result<Model, ModelError> {
    let mut nodes: Vec<Node> = document
        .nodes()
        .map(|node| {
            let (t, r, s) = node.transform().decomposed();
            Node {
                name: node
                    .name()
                    .map_or_else(|| format!("node {}", node.index()), str::to_string),
                parent: None,
                rest: Trs {
                    translation: Vec3::from(t),
                    rotation: Quat::from_array(r).normalize(),
                    scale: Vec3::from(s),
                },
            }
        })
        .collect();
    if nodes.len() > MAX_NODES {
        return Err(content(
            file,
            format!("{} nodes; at most {MAX_NODES}", nodes.len()),
        ));
    }
    for node in document.nodes() {
        for child in node.children() {
            nodes[child.index()].parent = Some(node.index());
        }
    }
    let order = hierarchy_order(&nodes).map_err(|problem| content(file, problem))?;
    check_accessors(file, document)?;
    let read = |buffer: gltf::Buffer<'_>| buffers.get(buffer.index()).map(|d| &d.0[..]);
    let mut model = Model {
        source: file.to_string(),
        nodes,
        order,
        joints: Vec::new(),
        vertices: Vec::new(),
        indices: Vec::new(),
        clips: Vec::new(),
        meshes: Vec::new(),
    };
    // Where each node stands at rest: a mesh without a skin is placed
    // there, so every vertex of the model shares one bind space.
    let rest: Vec<Trs> = model.nodes.iter().map(|n| n.rest).collect();
    let rest_world = super::pose::world(&model, &rest);
    for node in document.nodes() {
        let Some(mesh) = node.mesh() else {
            continue;
        };
        // A skinned mesh's vertices name the skin's joints; any other mesh
        // rides its own node, as one joint bound where that node stands at
        // rest (its vertices moved there, so the volume the branches grow
        // in holds it where it is drawn, not at the model's origin).
        let first_joint = model.joints.len() as u32;
        let placed = rest_world[node.index()];
        let skinned = match node.skin() {
            Some(skin) => {
                let joints = skin.joints().count();
                if model.joints.len() + joints > MAX_JOINTS {
                    return Err(content(
                        file,
                        format!("a skin of {joints} joints; at most {MAX_JOINTS} in all"),
                    ));
                }
                let reader = skin.reader(read);
                let inverse: Vec<Mat4> = match reader.read_inverse_bind_matrices() {
                    Some(matrices) => matrices.map(|m| Mat4::from_cols_array_2d(&m)).collect(),
                    None => vec![Mat4::IDENTITY; joints],
                };
                if inverse.len() != joints {
                    return Err(content(
                        file,
                        format!(
                            "a skin of {joints} joints has {} inverse bind matrices",
                            inverse.len()
                        ),
                    ));
                }
                for (joint, inverse_bind) in skin.joints().zip(inverse) {
                    model.joints.push(Joint {
                        node: joint.index(),
                        inverse_bind,
                    });
                }
                true
            }
            None => {
                model.joints.push(Joint {
                    node: node.index(),
                    inverse_bind: placed.inverse(),
                });
                false
            }
        };
        if model.joints.len() > MAX_JOINTS {
            return Err(content(
                file,
                format!("{} joints; at most {MAX_JOINTS}", model.joints.len()),
            ));
        }
        let joint_count = model.joints.len() as u32 - first_joint;
        let (before_vertices, before_indices) = (model.vertices.len(), model.indices.len());
        for primitive in mesh.primitives() {
            if primitive.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            let placed = (!skinned).then_some(placed);
            add_primitive(
                file,
                &mut model,
                &primitive,
                read,
                placed,
                (first_joint, joint_count),
            )?;
        }
        model.meshes.push(MeshSummary {
            name: mesh
                .name()
                .map_or_else(|| format!("mesh {}", mesh.index()), str::to_string),
            vertices: model.vertices.len() - before_vertices,
            triangles: (model.indices.len() - before_indices) / 3,
            skinned,
        });
    }
    if model.vertices.is_empty() {
        return Err(content(file, "no triangle mesh to draw"));
    }
    for animation in document.animations() {
        model.clips.push(
            read_clip(&animation, read).map_err(|error| ModelError::Clip {
                file: file.to_string(),
                error,
            })?,
        );
    }
    Ok(model)
}

/// Appends one triangle primitive's vertices and indices.
fn add_primitive<'a, 's>(
    file: &str,
    model: &mut Model,
    primitive: &'a gltf::Primitive<'a>,
    read: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    placed: Option<Mat4>,
    (first_joint, joint_count): (u32, u32),
) -> Result<(), ModelError> {
    let skinned = placed.is_none();
    let place = placed.unwrap_or(Mat4::IDENTITY);
    let turn = glam::Mat3::from_mat4(place).inverse().transpose();
    let reader = primitive.reader(read);
    let Some(positions) = reader.read_positions() else {
        return Err(content(file, "a primitive without POSITION"));
    };
    let positions: Vec<Vec3> = positions
        .map(|p| place.transform_point3(Vec3::from(p)))
        .collect();
    let count = positions.len();
    let joints: Vec<[u16; 4]> = match (skinned, reader.read_joints(0)) {
        (true, Some(joints)) => joints.into_u16().collect(),
        (true, None) => {
            return Err(content(file, "a skinned primitive without JOINTS_0"));
        }
        (false, _) => vec![[0; 4]; count],
    };
    let weights: Vec<[f32; 4]> = match (skinned, reader.read_weights(0)) {
        (true, Some(weights)) => weights.into_f32().collect(),
        (true, None) => {
            return Err(content(file, "a skinned primitive without WEIGHTS_0"));
        }
        (false, _) => vec![[1.0, 0.0, 0.0, 0.0]; count],
    };
    if joints.len() != count || weights.len() != count {
        return Err(content(
            file,
            "JOINTS_0 or WEIGHTS_0 has another count than POSITION",
        ));
    }
    let base = model.vertices.len() as u32;
    let indices: Vec<u32> = match reader.read_indices() {
        Some(indices) => indices.into_u32().collect(),
        None => (0..count as u32).collect(),
    };
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= count) {
        return Err(content(file, format!("index {bad} past {count} vertices")));
    }
    let material = Material::of(&primitive.material());
    let normals: Vec<Vec3> = match reader.read_normals() {
        Some(normals) => normals.map(|n| turn * Vec3::from(n)).collect(),
        None => face_normals(&positions, &indices),
    };
    for i in 0..count {
        let mut slots = [0u32; 4];
        let mut w = weights[i];
        for k in 0..4 {
            let joint = u32::from(joints[i][k]);
            if joint >= joint_count {
                if w[k] > 0.0 {
                    return Err(content(
                        file,
                        format!("vertex {i} names joint {joint} of a skin with {joint_count}"),
                    ));
                }
                w[k] = 0.0;
            }
            slots[k] = first_joint + joint.min(joint_count.saturating_sub(1));
        }
        let sum: f32 = w.iter().sum();
        let w = if sum > 0.0 {
            w.map(|x| x / sum)
        } else {
            [1.0, 0.0, 0.0, 0.0]
        };
        model.vertices.push(Vertex {
            position: positions[i],
            normal: normals
                .get(i)
                .copied()
                .unwrap_or(Vec3::Y)
                .normalize_or(Vec3::Y),
            joints: slots,
            weights: w,
            material,
        });
    }
    model.indices.extend(indices.iter().map(|i| base + i));
    Ok(())
}

/// Vertex normals as the sum of the faces around each vertex.
pub fn face_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for triangle in indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| triangle[k] as usize);
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        for v in [a, b, c] {
            normals[v] += n;
        }
    }
    normals
        .into_iter()
        .map(|n| n.normalize_or(Vec3::Y))
        .collect()
}
