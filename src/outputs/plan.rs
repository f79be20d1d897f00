//! The outputs file, `<project>/outputs/NAME.toml`: each `[[output]]` a
//! window or sender showing a region of the canvas, corner-pinned, warped
//! by a mesh, soft-edged and masked for a projector. Parsed with `file:line`
//! errors; [`OutputsPlan::write_back`] puts live mapping values back into
//! the file's own text, keeping its comments and layout.

use serde::Deserialize;
use toml::Spanned;

use crate::base::inside_show;

/// At most this many outputs in one file.
pub const MAX_OUTPUTS: usize = 16;
/// A mesh has at most this many columns and rows of points.
pub const MAX_MESH_SIDE: u32 = 16;
/// An output is at most this many pixels a side (and at most the
/// device's largest texture, [`OutputsPlan::fit_device`]).
pub const MAX_OUTPUT_SIDE: u32 = 8192;
/// The outputs of one file together have at most this many pixels:
/// 8192 × 4096, four 4K UHD outputs or sixteen 1080p ones. Every output is
/// drawn every frame (and each pixel read back again where it is sent):
/// four outputs of 8192² held a software adapter at 0.1 fps.
pub const MAX_OUTPUT_PIXELS: u64 = 8192 * 4096;

/// Why an outputs file was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct OutputsError {
    /// The file.
    pub file: String,
    /// Line of the fault, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Why live mapping values could not be written back into the file.
#[derive(Debug, thiserror::Error)]
pub enum WriteBackError {
    /// The file on disk is no longer TOML.
    #[error("{0}")]
    Parse(#[from] toml_edit::TomlError),
    /// The file on disk lost its outputs.
    #[error("the file has no [[output]] any more")]
    NoOutputs,
}

/// Why an output's corners, mesh or soft edges were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// A corner not finite or far off the output.
    #[error("corners must be numbers within -4..4 of the output")]
    CornersOutside,
    /// Corners that make no convex quadrilateral.
    #[error(
        "corners [top-left, top-right, bottom-right, bottom-left] must make a convex quadrilateral"
    )]
    NotConvex,
    /// A mesh too small or too large.
    #[error("mesh columns and rows must be 2..={MAX_MESH_SIDE}")]
    MeshSides,
    /// A mesh whose points do not fill its grid.
    #[error("mesh of {columns} x {rows} needs {wanted} points, found {found}")]
    MeshPoints {
        /// Points across.
        columns: u32,
        /// Points down.
        rows: u32,
        /// Points the grid has.
        wanted: usize,
        /// Points given.
        found: usize,
    },
    /// A mesh point not finite or far off the output.
    #[error("mesh points must be numbers within -4..4")]
    MeshOutside,
    /// A soft edge's width out of range.
    #[error("blend widths must be 0..0.5 of the output")]
    BlendWidths,
    /// A soft edge's gamma out of range.
    #[error("blend gamma must be 0.5..4")]
    BlendGamma,
    /// A soft edge's curve out of range.
    #[error("blend curve must be 0.5..8")]
    BlendCurve,
}

/// Which monitor an output opens on.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum MonitorChoice {
    /// The system's n-th monitor, from 0.
    Index(usize),
    /// The first monitor whose name contains this text.
    Name(String),
}

/// A warp grid: `columns` × `rows` points, row by row from the top left,
/// where the canvas region's lattice lands (0..1 before the corner pin).
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// Points across.
    pub columns: u32,
    /// Points down.
    pub rows: u32,
    /// `columns * rows` points, row-major.
    pub points: Vec<[f32; 2]>,
}

impl Mesh {
    /// The flat grid (no warp) of `columns` × `rows` points.
    pub fn flat(columns: u32, rows: u32) -> Self {
        let at = |i: u32, n: u32| i as f32 / (n - 1).max(1) as f32;
        let points = (0..rows)
            .flat_map(|r| (0..columns).map(move |c| [at(c, columns), at(r, rows)]))
            .collect();
        Self {
            columns,
            rows,
            points,
        }
    }
}

/// Soft edges for overlapping projectors: widths as fractions of the
/// output, the projector's gamma and the ramp's exponent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftEdges {
    /// Width of the ramp at the left edge, 0..0.5.
    pub left: f32,
    /// At the right edge.
    pub right: f32,
    /// At the top edge.
    pub top: f32,
    /// At the bottom edge.
    pub bottom: f32,
    /// The projector's gamma: the ramp is applied to light, so the
    /// overlap of two outputs adds up to the canvas.
    pub gamma: f32,
    /// The ramp's exponent (1 linear; higher keeps the middle flatter).
    pub curve: f32,
}

impl Default for SoftEdges {
    fn default() -> Self {
        Self {
            left: 0.0,
            right: 0.0,
            top: 0.0,
            bottom: 0.0,
            gamma: 2.2,
            curve: 2.0,
        }
    }
}

/// One output as the file describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputPlan {
    /// Its name (lowercase letters, digits, `_`): its parameters are
    /// `output.NAME.…` and its frames `DIR/NAME/`.
    pub name: String,
    /// Its line in the file.
    pub line: usize,
    /// Pixels.
    pub size: [u32; 2],
    /// The monitor it opens fullscreen on; none: a window.
    pub monitor: Option<MonitorChoice>,
    /// The part of the canvas it shows: x, y, width, height in 0..1.
    pub region: [f32; 4],
    /// Where the region's top-left, top-right, bottom-right and
    /// bottom-left corners land on the output, 0..1, y down.
    pub corners: [[f32; 2]; 4],
    /// A warp grid, if the surface is curved.
    pub mesh: Option<Mesh>,
    /// Soft edges.
    pub blend: SoftEdges,
    /// A picture in the show folder whose black hides.
    pub mask: Option<String>,
    /// Light multiplied, 0..4.
    pub brightness: f32,
    /// The black floor lifted to, 0..0.5 (to match the double black of an
    /// overlap).
    pub black_level: f32,
    /// Where this output is also sent (`ndi:NAME`, a stream URL, …).
    pub send: Vec<String>,
}

/// The corners of an output that shows its region unwarped.
pub const SQUARE: [[f32; 2]; 4] = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];

/// The longest side a file's `canvas` may ask for.
pub const MAX_CANVAS_SIDE: u32 = 16_384;

/// A whole outputs file.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputsPlan {
    /// The file name shown in messages.
    pub file: String,
    /// The outputs, in file order.
    pub outputs: Vec<OutputPlan>,
    /// The lighting fixtures its pixels are mapped to, in file order.
    pub dmx: Vec<super::dmx::FixturePlan>,
    /// The canvas's size whatever the window's (`canvas = [w, h]`): every
    /// machine of a wall renders the whole wall and shows its part.
    pub canvas: Option<[u32; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    canvas: Option<Spanned<[u32; 2]>>,
    #[serde(default)]
    output: Vec<Spanned<RawOutput>>,
    #[serde(default)]
    dmx: Vec<Spanned<super::dmx::fixtures::RawFixture>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    name: Spanned<String>,
    size: Spanned<[u32; 2]>,
    #[serde(default)]
    monitor: Option<MonitorChoice>,
    #[serde(default)]
    region: Option<Spanned<[f32; 4]>>,
    #[serde(default)]
    corners: Option<Spanned<[[f32; 2]; 4]>>,
    #[serde(default)]
    mesh: Option<Spanned<RawMesh>>,
    #[serde(default)]
    blend: Option<Spanned<RawBlend>>,
    #[serde(default)]
    mask: Option<Spanned<String>>,
    #[serde(default = "one")]
    brightness: f32,
    #[serde(default)]
    black_level: f32,
    #[serde(default)]
    send: Option<Sends>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Sends {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMesh {
    columns: u32,
    rows: u32,
    #[serde(default)]
    points: Option<Vec<[f32; 2]>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlend {
    #[serde(default)]
    left: f32,
    #[serde(default)]
    right: f32,
    #[serde(default)]
    top: f32,
    #[serde(default)]
    bottom: f32,
    #[serde(default = "gamma")]
    gamma: f32,
    #[serde(default = "curve")]
    curve: f32,
}

fn one() -> f32 {
    1.0
}

fn gamma() -> f32 {
    SoftEdges::default().gamma
}

fn curve() -> f32 {
    SoftEdges::default().curve
}

impl OutputsPlan {
    /// Parses an outputs file's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, OutputsError> {
        let at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let error = |line: usize, message: String| OutputsError {
            file: file.to_string(),
            line,
            message,
        };
        let raw: RawFile = toml::from_str(text)
            .map_err(|e| error(e.span().map_or(1, |s| at(s.start)), e.message().to_string()))?;
        if raw.output.is_empty() && raw.dmx.is_empty() {
            return Err(error(1, "no [[output]] or [[dmx]] in the file".into()));
        }
        if raw.output.len() > MAX_OUTPUTS {
            return Err(error(
                at(raw.output[MAX_OUTPUTS].span().start),
                format!("at most {MAX_OUTPUTS} outputs"),
            ));
        }
        let mut outputs: Vec<OutputPlan> = Vec::new();
        let mut pixels: u64 = 0;
        for spanned in raw.output {
            let line = at(spanned.span().start);
            let raw = spanned.into_inner();
            let output = checked(raw, &at).map_err(|(line, message)| error(line, message))?;
            if outputs.iter().any(|o| o.name == output.name) {
                return Err(error(line, format!("output {:?} twice", output.name)));
            }
            pixels += output.size.iter().map(|s| u64::from(*s)).product::<u64>();
            if pixels > MAX_OUTPUT_PIXELS {
                return Err(error(
                    line,
                    format!(
                        "output {:?} ({}x{}) brings the outputs to {pixels} pixels, over the {MAX_OUTPUT_PIXELS} a file may draw each frame (8192x4096, four 4K UHD or sixteen 1080p outputs): make them smaller",
                        output.name, output.size[0], output.size[1]
                    ),
                ));
            }
            outputs.push(OutputPlan { line, ..output });
        }
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        let dmx = super::dmx::fixtures::checked_fixtures(raw.dmx, &at, &names)
            .map_err(|(line, message)| error(line, message))?;
        let canvas = match raw.canvas {
            Some(canvas)
                if canvas
                    .get_ref()
                    .iter()
                    .any(|s| !(1..=MAX_CANVAS_SIDE).contains(s)) =>
            {
                return Err(error(
                    at(canvas.span().start),
                    format!("canvas sides are 1 to {MAX_CANVAS_SIDE} pixels"),
                ));
            }
            canvas => canvas.map(Spanned::into_inner),
        };
        Ok(Self {
            file: file.to_string(),
            outputs,
            dmx,
            canvas,
        })
    }

    /// Refuses an output larger than the device's largest texture
    /// (`max_side` pixels a side), at its line.
    pub fn fit_device(&self, max_side: u32) -> Result<(), OutputsError> {
        if let Some(canvas) = self.canvas.filter(|c| c.iter().any(|s| *s > max_side)) {
            return Err(OutputsError {
                file: self.file.clone(),
                line: 1,
                message: format!(
                    "the canvas is {}x{}; this GPU's textures are at most {max_side} pixels a side",
                    canvas[0], canvas[1]
                ),
            });
        }
        match self
            .outputs
            .iter()
            .find(|o| o.size.iter().any(|s| *s > max_side))
        {
            Some(output) => Err(OutputsError {
                file: self.file.clone(),
                line: output.line,
                message: format!(
                    "output {:?} is {}x{}; this GPU's textures are at most {max_side} pixels a side",
                    output.name, output.size[0], output.size[1]
                ),
            }),
            None => Ok(()),
        }
    }

    /// `text` (this file as it is on disk) with every output's region,
    /// corners, mesh points, soft edges, brightness and black level
    /// replaced by `self`'s, the rest of the file as it was.
    pub fn write_back(&self, text: &str) -> Result<String, WriteBackError> {
        let mut document: toml_edit::DocumentMut = text.parse()?;
        let tables = document
            .get_mut("output")
            .and_then(toml_edit::Item::as_array_of_tables_mut)
            .ok_or(WriteBackError::NoOutputs)?;
        for table in tables.iter_mut() {
            let Some(name) = table.get("name").and_then(toml_edit::Item::as_str) else {
                continue;
            };
            let Some(output) = self.outputs.iter().find(|o| o.name == name) else {
                continue;
            };
            output.write_into(table);
        }
        Ok(document.to_string())
    }
}

impl OutputPlan {
    fn write_into(&self, table: &mut toml_edit::Table) {
        use toml_edit::{Array, InlineTable, Item, value};
        let pair = |p: [f32; 2]| Array::from_iter(p.iter().map(|c| f64::from(round(*c))));
        table["region"] = value(Array::from_iter(
            self.region.iter().map(|c| f64::from(round(*c))),
        ));
        table["corners"] = value(Array::from_iter(self.corners.iter().map(|c| pair(*c))));
        if let Some(mesh) = &self.mesh {
            let mut inline = InlineTable::new();
            inline.insert("columns", i64::from(mesh.columns).into());
            inline.insert("rows", i64::from(mesh.rows).into());
            inline.insert(
                "points",
                Array::from_iter(mesh.points.iter().map(|p| pair(*p))).into(),
            );
            table["mesh"] = value(inline);
        }
        table["brightness"] = value(f64::from(round(self.brightness)));
        table["black_level"] = value(f64::from(round(self.black_level)));
        let edges = self.blend;
        let has_blend = table.contains_key("blend")
            || [edges.left, edges.right, edges.top, edges.bottom]
                .iter()
                .any(|w| *w > 0.0);
        if has_blend {
            let blend = table
                .entry("blend")
                .or_insert_with(|| Item::Table(toml_edit::Table::new()));
            for (key, v) in [
                ("left", edges.left),
                ("right", edges.right),
                ("top", edges.top),
                ("bottom", edges.bottom),
                ("gamma", edges.gamma),
                ("curve", edges.curve),
            ] {
                blend[key] = value(f64::from(round(v)));
            }
        }
    }
}

/// A value as the file keeps it: five decimals are a hundredth of a pixel
/// on an 8K output.
fn round(v: f32) -> f32 {
    (v * 1e5).round() / 1e5
}

/// The output `raw` checked; a fault with its line.
fn checked(raw: RawOutput, at: &dyn Fn(usize) -> usize) -> Result<OutputPlan, (usize, String)> {
    let name_line = at(raw.name.span().start);
    let name = raw.name.into_inner();
    let plain = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !plain {
        return Err((
            name_line,
            format!("output name {name:?}: lowercase letters, digits and _ (at most 32)"),
        ));
    }
    let size_line = at(raw.size.span().start);
    let size = raw.size.into_inner();
    if size.iter().any(|s| !(1..=MAX_OUTPUT_SIDE).contains(s)) {
        return Err((
            size_line,
            format!("size {size:?}: each side 1..={MAX_OUTPUT_SIDE} pixels"),
        ));
    }
    let region = match raw.region {
        Some(r) => {
            let line = at(r.span().start);
            let [x, y, w, h] = r.into_inner();
            let inside = [x, y, w, h].iter().all(|v| v.is_finite())
                && x >= 0.0
                && y >= 0.0
                && w > 0.0
                && h > 0.0
                && x + w <= 1.0 + 1e-4
                && y + h <= 1.0 + 1e-4;
            if !inside {
                return Err((
                    line,
                    "region [x, y, w, h] must lie inside the canvas, 0..1, with w and h above 0"
                        .into(),
                ));
            }
            [x, y, w, h]
        }
        None => [0.0, 0.0, 1.0, 1.0],
    };
    let corners = match raw.corners {
        Some(c) => {
            let line = at(c.span().start);
            let corners = c.into_inner();
            check_corners(&corners).map_err(|m| (line, m.to_string()))?;
            corners
        }
        None => SQUARE,
    };
    let mesh = match raw.mesh {
        Some(m) => {
            let line = at(m.span().start);
            Some(checked_mesh(m.into_inner()).map_err(|e| (line, e.to_string()))?)
        }
        None => None,
    };
    let blend = match raw.blend {
        Some(b) => {
            let line = at(b.span().start);
            checked_blend(&b.into_inner()).map_err(|e| (line, e.to_string()))?
        }
        None => SoftEdges::default(),
    };
    let mask = match raw.mask {
        Some(m) => {
            let line = at(m.span().start);
            let path = m.into_inner();
            inside_show(&path).map_err(|e| (line, e.to_string()))?;
            Some(path)
        }
        None => None,
    };
    if !(0.0..=4.0).contains(&raw.brightness) {
        return Err((name_line, "brightness must be 0..4".into()));
    }
    if !(0.0..=0.5).contains(&raw.black_level) {
        return Err((name_line, "black_level must be 0..0.5".into()));
    }
    let send = match raw.send {
        None => Vec::new(),
        Some(Sends::One(s)) => vec![s],
        Some(Sends::Many(list)) => list,
    };
    Ok(OutputPlan {
        name,
        line: name_line,
        size,
        monitor: raw.monitor,
        region,
        corners,
        mesh,
        blend,
        mask,
        brightness: raw.brightness,
        black_level: raw.black_level,
        send,
    })
}

/// Refuses corners that no projective map can reach: not finite, far
/// off the output, or not a convex quadrilateral in order.
pub fn check_corners(corners: &[[f32; 2]; 4]) -> Result<(), ShapeError> {
    if corners
        .iter()
        .flatten()
        .any(|v| !v.is_finite() || v.abs() > 4.0)
    {
        return Err(ShapeError::CornersOutside);
    }
    let turn = |i: usize| {
        let [a, b, c] = [corners[i], corners[(i + 1) % 4], corners[(i + 2) % 4]];
        (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])
    };
    let turns = [turn(0), turn(1), turn(2), turn(3)];
    let convex = turns.iter().all(|t| *t > 1e-6) || turns.iter().all(|t| *t < -1e-6);
    if convex {
        Ok(())
    } else {
        Err(ShapeError::NotConvex)
    }
}

fn checked_mesh(raw: RawMesh) -> Result<Mesh, ShapeError> {
    let sides = 2..=MAX_MESH_SIDE;
    if !sides.contains(&raw.columns) || !sides.contains(&raw.rows) {
        return Err(ShapeError::MeshSides);
    }
    let Some(points) = raw.points else {
        return Ok(Mesh::flat(raw.columns, raw.rows));
    };
    let wanted = (raw.columns * raw.rows) as usize;
    if points.len() != wanted {
        return Err(ShapeError::MeshPoints {
            columns: raw.columns,
            rows: raw.rows,
            wanted,
            found: points.len(),
        });
    }
    if points
        .iter()
        .flatten()
        .any(|v| !v.is_finite() || v.abs() > 4.0)
    {
        return Err(ShapeError::MeshOutside);
    }
    Ok(Mesh {
        columns: raw.columns,
        rows: raw.rows,
        points,
    })
}

fn checked_blend(raw: &RawBlend) -> Result<SoftEdges, ShapeError> {
    let widths = [raw.left, raw.right, raw.top, raw.bottom];
    if widths.iter().any(|w| !(0.0..=0.5).contains(w)) {
        return Err(ShapeError::BlendWidths);
    }
    if !(0.5..=4.0).contains(&raw.gamma) {
        return Err(ShapeError::BlendGamma);
    }
    if !(0.5..=8.0).contains(&raw.curve) {
        return Err(ShapeError::BlendCurve);
    }
    Ok(SoftEdges {
        left: raw.left,
        right: raw.right,
        top: raw.top,
        bottom: raw.bottom,
        gamma: raw.gamma,
        curve: raw.curve,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"
# two projectors, overlapping in the middle
[[output]]
name = "left"
size = [1920, 1080]
monitor = 1
region = [0.0, 0.0, 0.55, 1.0]
[output.blend]
right = 0.1

[[output]]
name = "right"
size = [1920, 1080]
monitor = "DELL"
region = [0.45, 0.0, 0.55, 1.0]
corners = [[0.02, 0.0], [1.0, 0.03], [0.98, 1.0], [0.0, 0.97]]
mesh = { columns = 3, rows = 2 }
send = "ndi:sylva right"
"#;

    #[test]
    fn two_projectors_parse_with_defaults() {
        let plan = OutputsPlan::parse("outputs/two.toml", TWO).expect("parses");
        assert_eq!(plan.outputs.len(), 2);
        let [left, right] = [&plan.outputs[0], &plan.outputs[1]];
        assert_eq!(left.monitor, Some(MonitorChoice::Index(1)));
        assert_eq!(left.corners, SQUARE);
        assert_eq!(left.blend.right, 0.1);
        assert_eq!(left.blend.gamma, 2.2);
        assert_eq!(right.monitor, Some(MonitorChoice::Name("DELL".into())));
        let mesh = right.mesh.as_ref().expect("mesh");
        assert_eq!(
            mesh.points,
            vec![
                [0.0, 0.0],
                [0.5, 0.0],
                [1.0, 0.0],
                [0.0, 1.0],
                [0.5, 1.0],
                [1.0, 1.0]
            ]
        );
        assert_eq!(right.send, vec!["ndi:sylva right".to_string()]);
        assert_eq!(right.line, 11);
    }

    #[test]
    fn faults_name_their_line() {
        let cases = [
            ("[[output]]\nname = \"a\"\nsize = [0, 10]\n", 3, "each side"),
            (
                "[[output]]\nname = \"A b\"\nsize = [10, 10]\n",
                2,
                "lowercase",
            ),
            (
                "[[output]]\nname = \"a\"\nsize = [10, 10]\ncorners = [[0,0],[1,1],[1,0],[0,1]]\n",
                4,
                "convex",
            ),
            (
                "[[output]]\nname = \"a\"\nsize = [10, 10]\nmask = \"../x.png\"\n",
                4,
                "inside the show",
            ),
            (
                "[[output]]\nname = \"a\"\nsize = [10, 10]\n\nmesh = { columns = 3, rows = 3, points = [[0,0]] }\n",
                5,
                "needs 9 points",
            ),
            (
                "[[output]]\nname = \"a\"\nsize = [10, 10]\nsizes = 3\n",
                4,
                "unknown field",
            ),
            (
                "[[output]]\nname = \"a\"\nsize = [10, 10]\n[[output]]\nname = \"a\"\nsize = [1, 1]\n",
                4,
                "twice",
            ),
        ];
        for (text, line, words) in cases {
            let error = OutputsPlan::parse("o.toml", text).expect_err(text);
            assert_eq!(error.line, line, "{text}: {error}");
            assert!(error.message.contains(words), "{text}: {error}");
        }
    }

    /// An outputs file of `count` outputs of `side`² pixels.
    fn square_outputs(count: usize, side: u32) -> String {
        (0..count)
            .map(|i| format!("[[output]]\nname = \"o{i}\"\nsize = [{side}, {side}]\n"))
            .collect()
    }

    #[test]
    fn outputs_over_the_pixel_budget_are_refused_at_the_line_that_crosses_it() {
        // Four outputs of 8192²: 0.1 fps on a software adapter.
        let error = OutputsPlan::parse("outputs/big.toml", &square_outputs(4, 8192))
            .expect_err("over the budget");
        assert_eq!(error.line, 1, "{error}");
        assert!(error.message.contains("over the"), "{error}");
        // Two of 4096² fill it; the third is named.
        let error = OutputsPlan::parse("outputs/big.toml", &square_outputs(4, 4096))
            .expect_err("over the budget");
        assert_eq!(error.line, 7, "{error}");
        assert!(error.message.contains("\"o2\""), "{error}");
        // Just over: 8192x4096 and one pixel more; other shapes too.
        let over = [
            "[[output]]\nname = \"a\"\nsize = [8192, 4096]\n[[output]]\nname = \"b\"\nsize = [1, 1]\n",
            "[[output]]\nname = \"a\"\nsize = [8192, 8192]\n",
            "[[output]]\nname = \"a\"\nsize = [4097, 8192]\n",
        ];
        for text in over {
            assert!(OutputsPlan::parse("o.toml", text).is_err(), "{text}");
        }
        // Within it: the installations it is sized for.
        let within = [
            "[[output]]\nname = \"a\"\nsize = [8192, 4096]\n".to_string(),
            (0..4)
                .map(|i| format!("[[output]]\nname = \"u{i}\"\nsize = [3840, 2160]\n"))
                .collect(),
            (0..16)
                .map(|i| format!("[[output]]\nname = \"h{i}\"\nsize = [1920, 1080]\n"))
                .collect(),
        ];
        for text in within {
            assert!(OutputsPlan::parse("o.toml", &text).is_ok(), "{text}");
        }
    }

    #[test]
    fn an_output_over_the_devices_texture_size_is_refused_at_its_line() {
        let plan = OutputsPlan::parse("outputs/o.toml", &square_outputs(2, 4096)).expect("parses");
        let error = plan.fit_device(2048).expect_err("too large");
        assert_eq!((error.file.as_str(), error.line), ("outputs/o.toml", 1));
        assert!(error.message.contains("2048"), "{error}");
        assert_eq!(plan.fit_device(4096), Ok(()));
    }

    #[test]
    fn writing_back_keeps_the_rest_of_the_file() {
        let mut plan = OutputsPlan::parse("two.toml", TWO).expect("parses");
        plan.outputs[1].corners[0] = [0.1, 0.2];
        plan.outputs[0].blend.right = 0.125;
        let written = plan.write_back(TWO).expect("writes");
        assert!(written.contains("# two projectors, overlapping in the middle"));
        assert!(written.contains("send = \"ndi:sylva right\""));
        let again = OutputsPlan::parse("two.toml", &written).expect("parses back");
        assert_eq!(again.outputs[1].corners[0], [0.1, 0.2]);
        assert_eq!(again.outputs[0].blend.right, 0.125);
        assert_eq!(again.outputs[1].mesh, plan.outputs[1].mesh);
    }
}
