//! The outputs of an outputs file, live: each a target of its own size
//! that the warp pass fills from the canvas every frame, its mapping read
//! from parameters (`output.NAME.corner.0.x` …) so OSC, MIDI, Lua, the
//! mapping mode's handles and a phone move it, and written back to the file
//! on `save`. `outputs.scale` draws every output at a fraction of its size
//! (the window or sender gets the same picture, softer): what the pace
//! guard lowers when the outputs keep a live show under its floor.

use std::path::Path;

use super::geometry::{WarpVertex, tessellate};
use super::grips::{Grip, MAX_GRIPS, grips};
use super::plan::{Mesh, OutputPlan, OutputsPlan};
use super::warp::{WarpPass, WarpUniforms, glyphs};
use crate::base::Assets;
use crate::engine::inputs::still::{self, DecodedImage};
use crate::engine::picture::Picture as Canvas;
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::image::{image_texture, write_image};
use crate::gpu::{BuildError, Gpu, GpuProfiler, RenderTarget};
use crate::params::{ParamSpec, Registry, Value};

/// The parameter showing the alignment pattern on every output.
pub const PATTERN: &str = "outputs.pattern";

/// The parameter drawing every output at a fraction of its size.
pub const SCALE: &str = "outputs.scale";

/// The smallest fraction of its size an output is drawn at.
pub const MIN_SCALE: f32 = 0.125;

/// The size an output of `size` is drawn at, `scale` of it.
pub fn drawn_size(size: [u32; 2], scale: f32) -> [u32; 2] {
    let scale = if scale.is_finite() {
        scale.clamp(MIN_SCALE, 1.0)
    } else {
        1.0
    };
    size.map(|s| ((s as f32 * scale).round() as u32).clamp(1, s.max(1)))
}

/// Every parameter of the outputs of `plan`, defaulting to the file's
/// values, and the pattern switch.
pub fn output_params(plan: &OutputsPlan) -> Vec<ParamSpec> {
    let mut specs = vec![
        ParamSpec::bool(PATTERN, false)
            .with_description("Alignment pattern on every output (mapping)"),
        ParamSpec::float(SCALE, 1.0, MIN_SCALE, 1.0)
            .costly()
            .with_description(
                "Outputs drawn at this fraction of their size (the pace guard lowers it when they keep the show under its floor)",
            ),
    ];
    for output in &plan.outputs {
        specs.extend(params_of(output));
    }
    specs
}

fn params_of(output: &OutputPlan) -> Vec<ParamSpec> {
    let name = |tail: &str| format!("output.{}.{tail}", output.name);
    let mut specs = Vec::new();
    for (axis, v) in ["x", "y", "w", "h"].iter().zip(output.region) {
        specs.push(
            ParamSpec::float(name(&format!("region.{axis}")), v, 0.0, 1.0)
                .with_description("The part of the canvas this output shows"),
        );
    }
    for (i, corner) in output.corners.iter().enumerate() {
        for (axis, v) in ["x", "y"].iter().zip(corner) {
            specs.push(
                ParamSpec::float(name(&format!("corner.{i}.{axis}")), *v, -4.0, 4.0)
                    .with_description("Corner pin (0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left), 0..1 of the output"),
            );
        }
    }
    if let Some(mesh) = &output.mesh {
        for (i, point) in mesh.points.iter().enumerate() {
            for (axis, v) in ["x", "y"].iter().zip(point) {
                specs.push(
                    ParamSpec::float(name(&format!("point.{i}.{axis}")), *v, -4.0, 4.0)
                        .with_description("Warp grid point, row by row"),
                );
            }
        }
    }
    let edges = output.blend;
    for (edge, v) in [
        ("left", edges.left),
        ("right", edges.right),
        ("top", edges.top),
        ("bottom", edges.bottom),
    ] {
        specs.push(
            ParamSpec::float(name(&format!("blend.{edge}")), v, 0.0, 0.5)
                .with_description("Soft-edge width, 0..0.5 of the output"),
        );
    }
    specs.push(
        ParamSpec::float(name("blend.gamma"), edges.gamma, 0.5, 4.0)
            .with_description("The projector's gamma for the soft edges"),
    );
    specs.push(
        ParamSpec::float(name("blend.curve"), edges.curve, 0.5, 8.0)
            .with_description("The soft edge's exponent"),
    );
    specs.push(ParamSpec::float(
        name("brightness"),
        output.brightness,
        0.0,
        4.0,
    ));
    specs.push(
        ParamSpec::float(name("black_level"), output.black_level, 0.0, 0.5)
            .with_description("Black lifted to match an overlap's double black"),
    );
    specs
}

/// One output, live.
pub struct MappedOutput {
    /// What the file says (its name, size, monitor, sends; the mapping as
    /// loaded).
    pub plan: OutputPlan,
    /// Its picture this frame, in the show's output format.
    pub target: RenderTarget,
    uniforms: wgpu::Buffer,
    vertices: wgpu::Buffer,
    count: u32,
    /// Corners and mesh points the vertices were made from.
    drawn: Option<([[f32; 2]; 4], Option<Mesh>)>,
    mask: wgpu::TextureView,
    /// Whether a mask was loaded (else the mask is one white texel).
    masked: bool,
    hue: f32,
    grips: wgpu::Buffer,
    /// Mapping mode's selected handle.
    pub selected: Option<Grip>,
}

/// The outputs of one outputs file.
pub struct MappedOutputs {
    /// The file's name in `outputs/` (without `.toml`).
    pub name: String,
    pass: WarpPass,
    outputs: Vec<MappedOutput>,
    canvas: Option<[u32; 2]>,
}

impl MappedOutputs {
    /// The outputs of `plan` (the file `outputs/NAME.toml`) with the
    /// `masks` [`read_masks`] decoded for it, drawing in `format`. A mask
    /// that could not be read is reported in `warnings` and the output
    /// runs unmasked.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        (name, plan, masks): (&str, &OutputsPlan, &[Mask]),
        format: wgpu::TextureFormat,
        warnings: &mut Vec<String>,
    ) -> Result<Self, BuildError> {
        let pass = WarpPass::new(gpu, assets, format)?;
        let count = plan.outputs.len().max(1) as f32;
        let outputs = plan
            .outputs
            .iter()
            .enumerate()
            .map(|(i, output)| {
                let (mask, masked) = match masks.get(i) {
                    Some(Ok(Some(picture))) => (mask_view(gpu, picture), true),
                    Some(Err(error)) => {
                        warnings.push(error.clone());
                        (white(gpu), false)
                    }
                    _ => (white(gpu), false),
                };
                MappedOutput {
                    target: RenderTarget::new(
                        &gpu.device,
                        &format!("output {}", output.name),
                        output.size,
                        format,
                    ),
                    uniforms: uniform_buffer(
                        &gpu.device,
                        "outputs.warp",
                        size_of::<WarpUniforms>(),
                    ),
                    vertices: vertex_buffer(gpu, 6),
                    count: 0,
                    drawn: None,
                    mask,
                    masked,
                    hue: i as f32 / count,
                    grips: uniform_buffer(&gpu.device, "outputs.grips", MAX_GRIPS * 16),
                    selected: None,
                    plan: output.clone(),
                }
            })
            .collect();
        Ok(Self {
            name: name.to_string(),
            pass,
            outputs,
            canvas: plan.canvas,
        })
    }

    /// The canvas size the file asks for, whatever the window's.
    pub fn canvas(&self) -> Option<[u32; 2]> {
        self.canvas
    }

    /// The outputs, in file order.
    pub fn outputs(&self) -> &[MappedOutput] {
        &self.outputs
    }

    /// The outputs, to select mapping handles.
    pub fn outputs_mut(&mut self) -> &mut [MappedOutput] {
        &mut self.outputs
    }

    /// The plan as the parameters have it now: what `save` writes.
    pub fn current(&self, registry: &Registry) -> Vec<OutputPlan> {
        self.outputs
            .iter()
            .map(|o| live_plan(&o.plan, registry))
            .collect()
    }

    /// Draws every output from `canvas`, its mapping read from `registry`.
    pub fn deliver(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        registry: &Registry,
        canvas: &Canvas,
    ) {
        let pattern = registry.flag(PATTERN);
        let scale = match registry.get(SCALE) {
            Some(Value::Float(scale)) => *scale,
            _ => 1.0,
        };
        for output in &mut self.outputs {
            let live = live_plan(&output.plan, registry);
            let drawn = drawn_size(live.size, scale);
            if output.target.size != drawn {
                output.target = RenderTarget::new(
                    &gpu.device,
                    &format!("output {}", live.name),
                    drawn,
                    output.target.texture.format(),
                );
            }
            output.update_geometry(gpu, &live);
            let (name, name_length) = glyphs(&live.name);
            let grips = if pattern { grips(&live) } else { Vec::new() };
            let selected = output
                .selected
                .and_then(|s| grips.iter().position(|(g, _)| *g == s))
                .map_or(u32::MAX, |i| i as u32);
            let packed: Vec<[f32; 4]> = grips
                .iter()
                .take(MAX_GRIPS)
                .map(|(grip, at)| {
                    [
                        at[0],
                        at[1],
                        f32::from(u8::from(matches!(grip, Grip::Point(_)))),
                        0.0,
                    ]
                })
                .collect();
            if !packed.is_empty() {
                gpu.queue
                    .write_buffer(&output.grips, 0, bytemuck::cast_slice(&packed));
            }
            let e = live.blend;
            let uniforms = WarpUniforms {
                region: live.region,
                edges: [e.left, e.right, e.top, e.bottom],
                size: drawn.map(|s| s as f32),
                gamma: e.gamma,
                curve: e.curve,
                brightness: live.brightness,
                black_level: live.black_level,
                pattern: u32::from(pattern),
                hue: output.hue,
                name,
                name_length,
                grip_count: packed.len() as u32,
                selected,
                shaping: u32::from(
                    output.masked
                        || live.black_level > 0.0
                        || [e.left, e.right, e.top, e.bottom].iter().any(|w| *w > 0.0),
                ),
            };
            gpu.queue
                .write_buffer(&output.uniforms, 0, bytemuck::bytes_of(&uniforms));
            let group = self.pass.bind(
                gpu,
                canvas.view(),
                &output.mask,
                (&output.uniforms, &output.grips),
            );
            self.pass.draw(
                encoder,
                profiler,
                &format!("output.{}", live.name),
                (&output.vertices, output.count),
                &group,
                &output.target.view,
            );
        }
    }
}

impl MappedOutput {
    /// Tessellates again when the corners or mesh moved.
    fn update_geometry(&mut self, gpu: &Gpu, live: &OutputPlan) {
        let now = (live.corners, live.mesh.clone());
        if self.drawn.as_ref() == Some(&now) {
            return;
        }
        // A dragged corner can pass through a fold: keep the last
        // drawable pin rather than draw a torn one.
        if super::plan::check_corners(&live.corners).is_err() && self.drawn.is_some() {
            return;
        }
        let vertices: Vec<WarpVertex> = tessellate(&live.corners, live.mesh.as_ref());
        let bytes = bytemuck::cast_slice(&vertices);
        if self.vertices.size() < bytes.len() as u64 {
            self.vertices = vertex_buffer(gpu, vertices.len());
        }
        gpu.queue.write_buffer(&self.vertices, 0, bytes);
        self.count = vertices.len() as u32;
        self.drawn = Some(now);
    }
}

impl MappedOutput {
    /// Its plan with the mapping as the parameters have it now.
    pub fn live(&self, registry: &Registry) -> OutputPlan {
        live_plan(&self.plan, registry)
    }
}

/// `plan` with its mapping as the parameters have it now.
fn live_plan(plan: &OutputPlan, registry: &Registry) -> OutputPlan {
    let read =
        |tail: String, default: f32| match registry.get(&format!("output.{}.{tail}", plan.name)) {
            Some(Value::Float(v)) => *v,
            _ => default,
        };
    let mut live = plan.clone();
    for (i, axis) in ["x", "y", "w", "h"].iter().enumerate() {
        live.region[i] = read(format!("region.{axis}"), plan.region[i]);
    }
    for (i, corner) in live.corners.iter_mut().enumerate() {
        corner[0] = read(format!("corner.{i}.x"), corner[0]);
        corner[1] = read(format!("corner.{i}.y"), corner[1]);
    }
    if let Some(mesh) = live.mesh.as_mut() {
        for (i, point) in mesh.points.iter_mut().enumerate() {
            point[0] = read(format!("point.{i}.x"), point[0]);
            point[1] = read(format!("point.{i}.y"), point[1]);
        }
    }
    let e = &mut live.blend;
    e.left = read("blend.left".into(), e.left);
    e.right = read("blend.right".into(), e.right);
    e.top = read("blend.top".into(), e.top);
    e.bottom = read("blend.bottom".into(), e.bottom);
    e.gamma = read("blend.gamma".into(), e.gamma);
    e.curve = read("blend.curve".into(), e.curve);
    live.brightness = read("brightness".into(), plan.brightness);
    live.black_level = read("black_level".into(), plan.black_level);
    // The region stays inside the canvas whatever the parameters say.
    live.region[0] = live.region[0].min(0.999);
    live.region[1] = live.region[1].min(0.999);
    live.region[2] = live.region[2].clamp(0.001, 1.0 - live.region[0]);
    live.region[3] = live.region[3].clamp(0.001, 1.0 - live.region[1]);
    live
}

fn vertex_buffer(gpu: &Gpu, count: usize) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("outputs.warp vertices"),
        size: (count * size_of::<WarpVertex>()) as u64,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// An output's mask decoded: none, the picture, or why it could not be
/// read.
pub type Mask = Result<Option<DecodedImage>, String>;

/// The masks `plan`'s outputs name, decoded from the show folder `root`
/// through the opener (no link, FIFO or device; pictures within their
/// limits). Slow for a large picture: read off the frame thread.
pub fn read_masks(root: &Path, plan: &OutputsPlan) -> Vec<Mask> {
    (plan.outputs.iter())
        .map(|output| {
            let Some(path) = &output.mask else {
                return Ok(None);
            };
            still::decode_in(root, Path::new(path))
                .map(Some)
                .map_err(|e| format!("output {}: mask {path}: {e}", output.name))
        })
        .collect()
}

/// The output's mask as a texture (its red channel, unencoded, multiplies
/// the signal).
fn mask_view(gpu: &Gpu, picture: &DecodedImage) -> wgpu::TextureView {
    let (texture, view) = image_texture(
        gpu,
        "outputs.mask",
        picture.size,
        wgpu::TextureFormat::Rgba8Unorm,
    );
    write_image(gpu, &texture, &picture.rgba);
    view
}

fn white(gpu: &Gpu) -> wgpu::TextureView {
    let (texture, view) =
        image_texture(gpu, "outputs.mask", [1, 1], wgpu::TextureFormat::Rgba8Unorm);
    write_image(gpu, &texture, &[255; 4]);
    view
}
