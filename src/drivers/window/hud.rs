//! The HUD, drawn with egui over the composited frame: fps, GPU time per
//! pass, the presets (with their thumbnails), the layers, every parameter
//! (editable) and the last errors. The
//! error panel shows even with the HUD hidden, because a performer must see
//! that a save broke their shader.

use std::time::Instant;

use super::thumbs::PresetThumbs;
use crate::base::Folder;
use crate::command::Command;
use crate::layers::shader::isf::library::is_shader_file;
use crate::params::{ParamKind, Source, Value};
use crate::show::{Show, THUMBS_FOLDER};

/// Frame-time average over this many frames.
const FPS_WINDOW: usize = 60;

/// HUD state and its egui show.
pub struct Hud {
    context: egui::Context,
    input: egui_winit::State,
    painter: egui_wgpu::Renderer,
    /// Whether the main panel shows (key `h`).
    pub visible: bool,
    frame_times: Vec<f32>,
    last_frame: Instant,
    selected: Option<String>,
    /// The presets' thumbnails, once the show says where they are.
    thumbs: Option<PresetThumbs>,
}

impl Hud {
    /// A HUD for `window`, drawing into targets of `format`; egui blends in
    /// gamma space, so give it the non-sRGB view of the surface.
    pub fn new(
        window: &winit::window::Window,
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
    ) -> Self {
        let context = egui::Context::default();
        context.set_visuals(egui::Visuals::dark());
        let input = egui_winit::State::new(
            context.clone(),
            egui::ViewportId::ROOT,
            window,
            Some(window.scale_factor() as f32),
            None,
            Some(device.limits().max_texture_dimension_2d as usize),
        );
        let painter =
            egui_wgpu::Renderer::new(device, format, egui_wgpu::RendererOptions::default());
        Self {
            context,
            input,
            painter,
            visible: false,
            frame_times: Vec::with_capacity(FPS_WINDOW),
            last_frame: Instant::now(),
            selected: None,
            thumbs: None,
        }
    }

    /// The parameter picked in the HUD (for MIDI learn).
    pub fn selected(&self) -> Option<String> {
        self.selected.clone()
    }

    /// Passes a window event to egui; true when egui used it (a click on a
    /// slider), so the show's keys should ignore it.
    pub fn on_window_event(
        &mut self,
        window: &winit::window::Window,
        event: &winit::event::WindowEvent,
    ) -> bool {
        self.input.on_window_event(window, event).consumed
    }

    /// Whether egui has keyboard focus (a text field).
    pub fn wants_keyboard(&self) -> bool {
        self.context.egui_wants_keyboard_input()
    }

    /// Builds the HUD for this frame and records its pass onto `view`.
    pub fn draw(
        &mut self,
        window: &winit::window::Window,
        show: &mut Show,
        status: &[String],
        encoder: &mut wgpu::CommandEncoder,
        view: &wgpu::TextureView,
        size: [u32; 2],
    ) {
        self.count_frame();
        let fps = self.fps();
        let raw = self.input.take_egui_input(window);
        let visible = self.visible;
        let selected = &mut self.selected;
        let thumbs = self.thumbs.get_or_insert_with(|| {
            PresetThumbs::new(show.ground.assets.dir(Folder::Presets).join(THUMBS_FOLDER))
        });
        let mut output = self.context.run_ui(raw, |ui| {
            error_panel(ui, show);
            if visible {
                main_panel(ui.ctx(), show, status, (selected, thumbs), fps);
            }
        });
        self.input
            .handle_platform_output(window, output.platform_output);
        let jobs = self
            .context
            .tessellate(output.shapes, output.pixels_per_point);
        let screen = egui_wgpu::ScreenDescriptor {
            size_in_pixels: size,
            pixels_per_point: output.pixels_per_point,
        };
        let gpu = &show.ground.gpu;
        for (id, deltas) in output.textures_delta.set.drain() {
            for delta in &deltas {
                self.painter
                    .update_texture(&gpu.device, &gpu.queue, id, delta);
            }
        }
        let commands =
            self.painter
                .update_buffers(&gpu.device, &gpu.queue, encoder, &jobs, &screen);
        gpu.queue.submit(commands);
        let pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("hud"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.painter
            .render(&mut pass.forget_lifetime(), &jobs, &screen);
        for id in output.textures_delta.free.drain() {
            self.painter.free_texture(&id);
        }
    }

    fn count_frame(&mut self) {
        let now = Instant::now();
        if self.frame_times.len() == FPS_WINDOW {
            self.frame_times.remove(0);
        }
        self.frame_times
            .push(now.duration_since(self.last_frame).as_secs_f32());
        self.last_frame = now;
    }

    fn fps(&self) -> f32 {
        let total: f32 = self.frame_times.iter().sum();
        if total > 0.0 {
            self.frame_times.len() as f32 / total
        } else {
            0.0
        }
    }
}

fn error_panel(ui: &mut egui::Ui, show: &Show) {
    let errors = show.ground.errors.snapshot();
    if errors.is_empty() {
        return;
    }
    egui::Panel::bottom("errors")
        .frame(
            egui::Frame::default()
                .fill(egui::Color32::from_black_alpha(220))
                .inner_margin(8.0),
        )
        .show(ui, |ui| {
            for error in errors.iter().rev().take(4) {
                ui.label(
                    egui::RichText::new(format!(
                        "{}: {}{}",
                        error.origin,
                        error.message,
                        match error.repeats {
                            0 => String::new(),
                            n => format!(" (again ×{n})"),
                        }
                    ))
                    .monospace()
                    .color(egui::Color32::from_rgb(255, 110, 100)),
                );
            }
        });
}

fn main_panel(
    context: &egui::Context,
    show: &mut Show,
    status: &[String],
    (selected, thumbs): (&mut Option<String>, &mut PresetThumbs),
    fps: f32,
) {
    egui::Window::new("sylva")
        .default_pos([12.0, 12.0])
        .default_width(340.0)
        .show(context, |ui| {
            ui.label(format!(
                "{fps:.1} fps   preset {}   {}x{}",
                show.preset().unwrap_or("-"),
                show.compositor().render_size()[0],
                show.compositor().render_size()[1]
            ));
            ui.collapsing("GPU ms per pass", |ui| {
                if !show.profiler.enabled() {
                    ui.label("this adapter has no timestamp queries");
                }
                // Passes run many times a frame (substeps) show once, summed.
                let mut totals: Vec<(&str, f64, usize)> = Vec::new();
                for pass in show.profiler.latest() {
                    match totals.iter_mut().find(|(label, _, _)| *label == pass.label) {
                        Some((_, ms, count)) => {
                            *ms += pass.ms;
                            *count += 1;
                        }
                        None => totals.push((&pass.label, pass.ms, 1)),
                    }
                }
                let frame: f64 = totals.iter().map(|(_, ms, _)| ms).sum();
                let span = show.profiler.latest_span_ms();
                ui.monospace(format!("{:<32} {span:>7.3}", "frame (GPU, first to last)"));
                ui.monospace(format!("{:<32} {frame:>7.3}", "frame (passes added up)"));
                for (label, ms, count) in totals {
                    let times = if count > 1 {
                        format!(" x{count}")
                    } else {
                        String::new()
                    };
                    ui.monospace(format!("{:<32} {ms:>7.3}{times}", label));
                }
            });
            ui.collapsing("presets", |ui| {
                let catalogue = show.catalogue();
                let (names, playing) = (catalogue.presets.clone(), catalogue.preset.clone());
                if let Some(name) = thumbs.buttons(ui, &names, playing.as_deref())
                    && let Err(error) = show.perform(Command::LoadPreset(name, None))
                {
                    show.ground.errors.report("hud", error.to_string());
                }
            });
            let layers: Vec<String> = show
                .layers()
                .iter()
                .map(|l| match l.switches().enabled(&show.registry) {
                    true => l.id().to_string(),
                    false => format!("{} (off)", l.id()),
                })
                .collect();
            ui.label(format!("layers: {}", layers.join(", ")));
            // Open at start: the input, the tempo heard and the spectrum are
            // what a VJ glances at.
            egui::CollapsingHeader::new("control")
                .default_open(true)
                .show(ui, |ui| {
                    for line in status {
                        ui.label(line);
                    }
                    ui.label("MIDI learn: click a parameter name, press l, move a control");
                    audio_panel(ui, show);
                });
            egui::ScrollArea::vertical()
                .max_height(480.0)
                .show(ui, |ui| {
                    parameter_editors(ui, show, selected);
                });
        });
}

/// The audio input, the tempo heard, Link, and a small spectrum.
fn audio_panel(ui: &mut egui::Ui, show: &Show) {
    let hearing = show.hearing();
    let heard = hearing.last();
    let link = hearing
        .link_peers()
        .map_or(String::new(), |peers| format!("   Link: {peers} peers"));
    ui.label(format!(
        "audio: {}   {:.1} bpm heard   {} modulations{link}",
        hearing.device(),
        heard.bpm,
        hearing.modulations()
    ));
    let bar = 10.0;
    let height = 36.0;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(bar * heard.bands.len() as f32, height),
        egui::Sense::hover(),
    );
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, egui::Color32::from_gray(24));
    for (k, value) in heard.bands.iter().enumerate() {
        let left = rect.left() + bar * k as f32;
        let top = rect.bottom() - height * value.clamp(0.0, 1.0);
        let column = egui::Rect::from_min_max(
            egui::pos2(left + 1.0, top),
            egui::pos2(left + bar - 1.0, rect.bottom()),
        );
        let colour = if heard.onset.is_some() {
            egui::Color32::WHITE
        } else {
            egui::Color32::from_rgb(90, 200, 150)
        };
        painter.rect_filled(column, 0.0, colour);
    }
}

/// One editor per parameter; edits go through the registry like any other
/// control source.
fn parameter_editors(ui: &mut egui::Ui, show: &mut Show, selected: &mut Option<String>) {
    let params: Vec<_> = show
        .registry
        .iter()
        .map(|(s, v)| (s.clone(), v.clone()))
        .collect();
    // Listed only while some parameter is a texture input (a short
    // directory read of at most 256 entries).
    let textures = params
        .iter()
        .any(|(spec, _)| spec.kind == ParamKind::Texture);
    let sources = if textures {
        let ndi = show.catalogue().ndi_sources.clone();
        texture_sources(show, ndi)
    } else {
        Vec::new()
    };
    let shaders = if params.iter().any(|(spec, _)| is_shader_file(&spec.name)) {
        show.catalogue().shaders.clone()
    } else {
        Vec::new()
    };
    for (spec, value) in params {
        let edited = ui
            .horizontal(|ui| {
                let is_selected = selected.as_deref() == Some(spec.name.as_str());
                let label = ui.selectable_label(is_selected, &spec.name);
                if label.on_hover_text(&spec.description).clicked() {
                    *selected = Some(spec.name.clone());
                }
                if spec.read_only {
                    // The bands read better as the spectrum above.
                    let shown = match &value {
                        Value::List(values) => format!("{} values", values.len()),
                        other => other.to_string(),
                    };
                    ui.monospace(shown);
                    None
                } else if spec.kind == ParamKind::Texture {
                    pick_source(ui, &sources, value, true)
                } else if is_shader_file(&spec.name) {
                    pick_source(ui, &shaders, value, false)
                } else {
                    edit_value(ui, &spec.kind, value)
                }
            })
            .inner;
        if let Some(Err(error)) =
            edited.map(|v| show.perform(Command::Set(spec.name.clone(), v, Source::Ui)))
        {
            show.ground.errors.report("hud", error.to_string());
        }
    }
}

/// The sources a texture input may name now: the engine's, every layer
/// on stage, the cameras, the screen, the keyboard, the sound, the NDI sources `ndi`
/// seen on the network, and the files and folders (a cube map's faces) in
/// the show's `media/` (at most 256, two folders down).
fn texture_sources(show: &Show, ndi: Vec<String>) -> Vec<String> {
    let mut sources: Vec<String> = ["below", "previous", "camera", "screen", "keyboard", "audio"]
        .map(String::from)
        .to_vec();
    sources.extend(show.layers().iter().map(|l| format!("layer:{}", l.id())));
    sources.extend(ndi);
    let mut files = Vec::new();
    let mut folders = vec![(
        show.ground.assets.root().join("media"),
        "media".to_string(),
        0,
    )];
    while let Some((dir, name, depth)) = folders.pop() {
        for entry in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .take(256)
        {
            let entry_name = format!("{name}/{}", entry.file_name().to_string_lossy());
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < 1 => {
                    if files.len() < 256 {
                        files.push(entry_name.clone());
                    }
                    folders.push((entry.path(), entry_name, depth + 1))
                }
                Ok(t) if t.is_file() && files.len() < 256 => files.push(entry_name),
                _ => {}
            }
        }
    }
    files.sort();
    sources.extend(files);
    sources
}

/// A texture input's source or a shader layer's file, chosen from
/// `sources` (or none, where `none` may be chosen).
fn pick_source(ui: &mut egui::Ui, sources: &[String], value: Value, none: bool) -> Option<Value> {
    let current = value.as_text().unwrap_or_default().to_string();
    let mut chosen = current.clone();
    let shown = if current.is_empty() {
        "(none)"
    } else {
        current.as_str()
    };
    egui::ComboBox::from_id_salt(ui.next_auto_id())
        .selected_text(shown)
        .show_ui(ui, |ui| {
            if none {
                ui.selectable_value(&mut chosen, String::new(), "(none)");
            }
            for source in sources {
                ui.selectable_value(&mut chosen, source.clone(), source);
            }
        });
    (chosen != current).then_some(Value::Text(chosen))
}

fn edit_value(ui: &mut egui::Ui, kind: &ParamKind, value: Value) -> Option<Value> {
    match (kind, value) {
        (ParamKind::Float { min, max }, Value::Float(mut v)) => ui
            .add(egui::Slider::new(&mut v, *min..=*max))
            .changed()
            .then_some(Value::Float(v)),
        (ParamKind::Int { min, max }, Value::Int(mut v)) => ui
            .add(egui::Slider::new(&mut v, *min..=*max))
            .changed()
            .then_some(Value::Int(v)),
        (ParamKind::Bool, Value::Bool(mut v)) => {
            ui.checkbox(&mut v, "").changed().then_some(Value::Bool(v))
        }
        (ParamKind::Enum { options }, Value::Enum(mut v)) => {
            let before = v;
            egui::ComboBox::from_id_salt(ui.next_auto_id())
                .selected_text(options.get(v).map_or("?", String::as_str))
                .show_ui(ui, |ui| {
                    for (index, name) in options.iter().enumerate() {
                        ui.selectable_value(&mut v, index, name);
                    }
                });
            (v != before).then_some(Value::Enum(v))
        }
        (ParamKind::Colour, Value::Colour(mut c)) => ui
            .color_edit_button_rgba_unmultiplied(&mut c)
            .changed()
            .then_some(Value::Colour(c)),
        (ParamKind::Vec3 { min, max }, Value::Vec3(mut v)) => {
            let mut changed = false;
            for component in &mut v {
                changed |= ui
                    .add(
                        egui::DragValue::new(component)
                            .range(*min..=*max)
                            .speed(0.01),
                    )
                    .changed();
            }
            changed.then_some(Value::Vec3(v))
        }
        (_, other) => {
            ui.monospace(other.to_string());
            None
        }
    }
}
