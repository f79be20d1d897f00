//! A window per output of the outputs file: borderless fullscreen on its
//! monitor (the first one, said on screen, when that monitor is not
//! there; a plain window where there is one monitor), moved back to its
//! monitor when it is plugged in again, and showing the output's warped
//! picture. In mapping mode the mouse drags the output's corners and mesh
//! points and the arrow keys nudge the one selected.

use std::sync::Arc;
use std::time::{Duration, Instant};

use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::ActiveEventLoop;
use winit::monitor::MonitorHandle;
use winit::window::{Fullscreen, Window, WindowId};

use super::surface_config;
use crate::command::Command;
use crate::gpu::{Gpu, GpuProfiler};
use crate::outputs::grips::{Grip, drag, grips, nearest, position};
use crate::outputs::plan::MonitorChoice;
use crate::outputs::{Blit, Output, Pictures};
use crate::params::{Source, Value};
use crate::show::Show;

/// How often monitors are looked at for one plugged in again.
const MONITOR_SCAN: Duration = Duration::from_secs(2);

/// How near (a fraction of the output's width) a click grabs a handle.
const REACH: f32 = 0.03;

struct OutputWindow {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    blit: Blit,
    name: String,
    monitor: Option<MonitorChoice>,
    /// The monitor it is fullscreen on, by name.
    placed: Option<String>,
    /// The pointer, 0..1 of the window.
    pointer: [f32; 2],
    dragging: Option<Grip>,
    /// This frame's surface texture, drawn and waiting to be presented.
    drawn: Option<wgpu::SurfaceTexture>,
}

/// The output windows.
#[derive(Default)]
pub struct Projectors {
    windows: Vec<OutputWindow>,
    /// The outputs (name, size) the windows were opened for.
    opened_for: Vec<(String, [u32; 2])>,
    scanned: Option<Instant>,
    /// The queue of the last frame recorded (a recovered device has a new
    /// one), where its pictures are presented.
    queue: Option<wgpu::Queue>,
}

impl Projectors {
    /// Opens, closes and places windows so there is one per output of the
    /// show's outputs file, each on its monitor.
    pub fn sync(&mut self, event_loop: &ActiveEventLoop, show: &mut Show) {
        let wanted: Vec<(String, [u32; 2])> = show
            .outputs()
            .map(|o| o.outputs())
            .unwrap_or_default()
            .iter()
            .map(|o| (o.plan.name.clone(), o.plan.size))
            .collect();
        if wanted != self.opened_for {
            self.windows.clear();
            self.opened_for = wanted;
            self.scanned = None;
            self.open_all(event_loop, show);
        }
        if self.scanned.is_none_or(|t| t.elapsed() >= MONITOR_SCAN) {
            self.scanned = Some(Instant::now());
            let monitors: Vec<MonitorHandle> = event_loop.available_monitors().collect();
            for output in &mut self.windows {
                output.place(&monitors, show);
            }
        }
    }

    fn open_all(&mut self, event_loop: &ActiveEventLoop, show: &mut Show) {
        let plans: Vec<_> = show
            .outputs()
            .map(|o| o.outputs().iter().map(|o| o.plan.clone()).collect())
            .unwrap_or_default();
        for plan in plans {
            let size = winit::dpi::PhysicalSize::new(plan.size[0], plan.size[1]);
            let attributes = Window::default_attributes()
                .with_title(format!("sylva output {}", plan.name))
                .with_inner_size(size);
            let opened = event_loop
                .create_window(attributes)
                .map_err(|e| e.to_string())
                .and_then(|window| {
                    let window = Arc::new(window);
                    let surface = show
                        .ground
                        .gpu
                        .instance
                        .create_surface(window.clone())
                        .map_err(|e| e.to_string())?;
                    let inner = window.inner_size();
                    let config = surface_config(
                        &show.ground.gpu,
                        &surface,
                        [inner.width, inner.height],
                        true,
                    )
                    .map_err(|e| e.to_string())?;
                    surface.configure(&show.ground.gpu.device, &config);
                    let blit = Blit::new(&show.ground.gpu, &show.ground.assets, config.format)
                        .map_err(|e| e.to_string())?;
                    Ok(OutputWindow {
                        window,
                        surface,
                        config,
                        blit,
                        name: plan.name.clone(),
                        monitor: plan.monitor.clone(),
                        placed: None,
                        pointer: [0.5, 0.5],
                        dragging: None,
                        drawn: None,
                    })
                });
            match opened {
                Ok(window) => self.windows.push(window),
                Err(error) => show.ground.errors.report(
                    "outputs",
                    format!("output {}: no window: {error}", plan.name),
                ),
            }
        }
    }

    /// Whether `id` is one of the output windows.
    pub fn owns(&self, id: WindowId) -> bool {
        self.windows.iter().any(|w| w.window.id() == id)
    }

    /// Handles an event of output window `id`: resizing, and in mapping
    /// mode the mouse grabbing and dragging handles.
    pub fn event(&mut self, id: WindowId, event: &WindowEvent, show: &mut Show) {
        let mapping = show.registry.flag(crate::outputs::PATTERN);
        let Some(window) = self.windows.iter_mut().find(|w| w.window.id() == id) else {
            return;
        };
        match event {
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                window.config.width = size.width;
                window.config.height = size.height;
                window
                    .surface
                    .configure(&show.ground.gpu.device, &window.config);
            }
            WindowEvent::CursorMoved { position, .. } => {
                let size = window.window.inner_size();
                window.pointer = [
                    position.x as f32 / size.width.max(1) as f32,
                    position.y as f32 / size.height.max(1) as f32,
                ];
                if let (true, Some(grip)) = (mapping, window.dragging) {
                    move_grip(show, &window.name, grip, window.pointer);
                }
            }
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } if mapping => {
                if *state == ElementState::Pressed {
                    let grabbed = live_plan(show, &window.name)
                        .and_then(|plan| nearest(&plan, window.pointer, REACH));
                    window.dragging = grabbed;
                    if grabbed.is_some() {
                        select(show, &window.name, grabbed);
                    }
                } else {
                    window.dragging = None;
                }
            }
            _ => {}
        }
    }
}

/// The projectors as one output: each window draws its output's picture
/// of the frame into the frame's commands and shows it once they are
/// submitted.
impl Output for Projectors {
    fn size(&self) -> Option<[u32; 2]> {
        None
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        self.queue = Some(gpu.queue.clone());
        for window in &mut self.windows {
            let Some(picture) = pictures.output(&window.name) else {
                continue;
            };
            let texture = match window.surface.get_current_texture() {
                wgpu::CurrentSurfaceTexture::Success(t)
                | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
                _ => {
                    window.surface.configure(&gpu.device, &window.config);
                    continue;
                }
            };
            let view = texture
                .texture
                .create_view(&wgpu::TextureViewDescriptor::default());
            window
                .blit
                .draw(gpu, encoder, profiler, &picture.view, &view);
            window.drawn = Some(texture);
        }
    }

    fn submitted(&mut self) {
        let Some(queue) = &self.queue else {
            return;
        };
        for window in &mut self.windows {
            if let Some(texture) = window.drawn.take() {
                window.window.pre_present_notify();
                queue.present(texture);
            }
        }
    }
}

/// Where an output's window goes, given the monitors there now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WindowPlacement {
    /// Leave it where it is.
    Stay,
    /// A plain window (there is one monitor: it is the show's).
    Windowed,
    /// Fullscreen on monitor `index`; `missing` when that is the first one
    /// standing in for a monitor that is not there.
    Fullscreen { index: usize, missing: bool },
}

/// Where the window of an output wanting `choice`, now fullscreen on
/// the monitor named `placed` (none: windowed or on a stand-in), goes
/// among `monitors` (their names, in the system's order). A stand-in is
/// never `placed`, so the output moves to its own monitor at the first
/// scan that finds it plugged in again.
fn placement(
    monitors: &[String],
    choice: Option<&MonitorChoice>,
    placed: Option<&str>,
) -> WindowPlacement {
    if monitors.len() <= 1 {
        return if placed.is_some() {
            WindowPlacement::Windowed
        } else {
            WindowPlacement::Stay
        };
    }
    let wanted = match choice {
        Some(MonitorChoice::Index(i)) => (*i < monitors.len()).then_some(*i),
        Some(MonitorChoice::Name(part)) => monitors.iter().position(|m| m.contains(part.as_str())),
        None => return WindowPlacement::Stay,
    };
    let (index, missing) = match wanted {
        Some(index) => (index, false),
        None => (0, true),
    };
    if !missing && placed == Some(monitors[index].as_str()) {
        return WindowPlacement::Stay;
    }
    WindowPlacement::Fullscreen { index, missing }
}

impl OutputWindow {
    /// Puts the window fullscreen on its monitor if it is there, else on
    /// the first (said on screen); a plain window where there is one.
    fn place(&mut self, monitors: &[MonitorHandle], show: &Show) {
        let names: Vec<String> = monitors
            .iter()
            .map(|m| m.name().unwrap_or_else(|| "monitor".into()))
            .collect();
        match placement(&names, self.monitor.as_ref(), self.placed.as_deref()) {
            WindowPlacement::Stay => {}
            WindowPlacement::Windowed => {
                self.placed = None;
                self.window.set_fullscreen(None);
            }
            WindowPlacement::Fullscreen { index, missing } => {
                if missing {
                    show.ground.errors.report(
                        "outputs",
                        format!(
                            "output {}: monitor {:?} is not there; showing it on {} until it is",
                            self.name, self.monitor, names[index]
                        ),
                    );
                }
                self.window
                    .set_fullscreen(Some(Fullscreen::Borderless(Some(monitors[index].clone()))));
                // Placed on a stand-in: look again at the next scan.
                self.placed = (!missing).then(|| names[index].clone());
            }
        }
    }
}

/// The output `name`'s plan with its mapping now.
fn live_plan(show: &Show, name: &str) -> Option<crate::outputs::OutputPlan> {
    show.outputs()?
        .outputs()
        .iter()
        .find(|o| o.plan.name == name)
        .map(|o| o.live(&show.registry))
}

/// Selects handle `grip` of output `name` (none: clears it).
fn select(show: &mut Show, name: &str, grip: Option<Grip>) {
    if let Some(outputs) = show.outputs_mut() {
        for output in outputs.outputs_mut() {
            output.selected = if output.plan.name == name { grip } else { None };
        }
    }
}

/// Moves `grip` of output `name` to `to`, through the show's commands.
fn move_grip(show: &mut Show, name: &str, grip: Grip, to: [f32; 2]) {
    let Some(plan) = live_plan(show, name) else {
        return;
    };
    for (param, value) in drag(&plan, grip, to) {
        if let Err(error) = show.perform(Command::Set(param, Value::Float(value), Source::Ui)) {
            show.ground.errors.report("mapping", error);
        }
    }
}

/// Mapping mode's keys on any window: Tab selects the next handle of
/// the outputs, the arrows nudge the selected one by a pixel of its
/// output (ten with Shift).
pub fn nudge(show: &mut Show, step: [i32; 2], coarse: bool) {
    let Some((name, grip)) = selected(show) else {
        return;
    };
    let Some(plan) = live_plan(show, &name) else {
        return;
    };
    let Some(at) = position(&plan, grip) else {
        return;
    };
    let pixels = if coarse { 10.0 } else { 1.0 };
    let to = [
        at[0] + step[0] as f32 * pixels / plan.size[0] as f32,
        at[1] + step[1] as f32 * pixels / plan.size[1] as f32,
    ];
    move_grip(show, &name, grip, to);
}

/// Selects the handle after the selected one, across the outputs.
pub fn select_next(show: &mut Show) {
    let all: Vec<(String, Grip)> = show
        .outputs()
        .map(|o| {
            o.outputs()
                .iter()
                .flat_map(|output| {
                    let live = output.live(&show.registry);
                    grips(&live)
                        .into_iter()
                        .map(move |(g, _)| (live.name.clone(), g))
                })
                .collect()
        })
        .unwrap_or_default();
    if all.is_empty() {
        return;
    }
    let next = selected(show)
        .and_then(|s| all.iter().position(|a| *a == s))
        .map_or(0, |i| (i + 1) % all.len());
    let (name, grip) = all[next].clone();
    select(show, &name, Some(grip));
}

fn selected(show: &Show) -> Option<(String, Grip)> {
    show.outputs()?
        .outputs()
        .iter()
        .find_map(|o| o.selected.map(|g| (o.plan.name.clone(), g)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn an_output_unplugged_shows_on_the_first_monitor_and_returns_to_its_own() {
        let right = MonitorChoice::Name("EPSON".into());
        let both = names(&["DELL U2720", "EPSON EB-L"]);
        let fullscreen = |index, missing| WindowPlacement::Fullscreen { index, missing };
        // Opened with both monitors: on its own.
        assert_eq!(placement(&both, Some(&right), None), fullscreen(1, false));
        assert_eq!(
            placement(&both, Some(&right), Some("EPSON EB-L")),
            WindowPlacement::Stay
        );
        // Its projector unplugged, another plugged in: the first stands in,
        // and is looked at again at each scan (never taken as placed).
        let other = names(&["DELL U2720", "BenQ"]);
        assert_eq!(
            placement(&other, Some(&right), Some("EPSON EB-L")),
            fullscreen(0, true)
        );
        assert_eq!(placement(&other, Some(&right), None), fullscreen(0, true));
        // Plugged back: it returns to its monitor.
        assert_eq!(placement(&both, Some(&right), None), fullscreen(1, false));
        // Down to one monitor (the show's own): a plain window.
        let one = names(&["DELL U2720"]);
        assert_eq!(
            placement(&one, Some(&right), Some("EPSON EB-L")),
            WindowPlacement::Windowed
        );
        assert_eq!(placement(&one, Some(&right), None), WindowPlacement::Stay);
        // By index: the second monitor, the first while there is no second.
        let second = MonitorChoice::Index(1);
        let three = names(&["A", "B", "C"]);
        assert_eq!(placement(&three, Some(&second), None), fullscreen(1, false));
        assert_eq!(placement(&both, None, None), WindowPlacement::Stay);
    }
}
