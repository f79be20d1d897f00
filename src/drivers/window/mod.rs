//! The window: winit's event loop, the surface, fullscreen and monitor
//! choice, keys and the HUD. Each redraw runs one frame of the shared
//! [`Show`](crate::show::Show) into the surface, then the HUD on top, then presents.

mod hud;
pub mod keys;
mod pointer;
mod projectors;
mod thumbs;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::ModifiersState;
use winit::window::{Fullscreen, Window, WindowId};

use crate::base::status::ErrorLog;
use crate::command::Command;
use crate::control::ControlOptions;
use crate::drivers::live::{Live, LiveOptions, OFF_AIR_NAP, Stepped};
use crate::gpu::Gpu;
use crate::outputs::send::SendOptions;
use crate::outputs::{Blit, Both, SurfaceOutput};
use crate::show::ensemble::Role;
use crate::show::installation::InstallOptions;
use crate::show::{ShowOptions, start_live_on};
use hud::Hud;
use keys::KeyAction;
use pointer::Pointer;
use projectors::Projectors;

/// Options of `sylva run` with a window.
#[derive(Debug, Clone)]
pub struct WindowOptions {
    /// The show.
    pub show: ShowOptions,
    /// Start in borderless fullscreen.
    pub fullscreen: bool,
    /// Monitor index for fullscreen (0 = primary order of the system).
    pub monitor: Option<usize>,
    /// Wait for vertical blank.
    pub vsync: bool,
    /// MIDI and OSC.
    pub control: ControlOptions,
    /// Installation mode: unattended (no HUD, no cursor, fullscreen),
    /// state file, schedule.
    pub install: InstallOptions,
    /// NDI, streams, recording.
    pub send: SendOptions,
    /// Leading or following other machines.
    pub ensemble: Option<Role>,
}

/// There is no display to open a window on.
#[derive(Debug, thiserror::Error)]
#[error(
    "no display available ({0}); use `sylva render` to write frames or `sylva run --headless` to run without a window"
)]
pub struct NoDisplay(String);

/// Opens the window and runs the show until it is closed or Ctrl+Q.
pub fn run(options: WindowOptions) -> anyhow::Result<()> {
    let event_loop = EventLoop::new().map_err(|e| NoDisplay(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        options,
        state: None,
        failure: None,
        modifiers: ModifiersState::empty(),
        last_frame: Instant::now(),
    };
    event_loop.run_app(&mut app).context("event loop")?;
    match app.failure {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

struct App {
    options: WindowOptions,
    state: Option<OpenWindow>,
    failure: Option<anyhow::Error>,
    modifiers: ModifiersState,
    last_frame: Instant,
}

/// Everything that exists once the window is open.
struct OpenWindow {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    /// Draws the show's picture onto the surface.
    blit: Blit,
    /// The show and what plays it along (control, senders, installation).
    live: Live,
    /// The performer's overlay; none in installation mode.
    hud: Option<Hud>,
    pointer: Pointer,
    /// A window per output of the outputs file.
    projectors: Projectors,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.state.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(running) => self.state = Some(running),
            Err(error) => {
                self.failure = Some(error);
                event_loop.exit();
            }
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(state) = self.state.as_mut() {
            state.live.finish();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        let Some(state) = self.state.as_mut() else {
            return;
        };
        if state.projectors.owns(id) {
            if let WindowEvent::ModifiersChanged(modifiers) = &event {
                self.modifiers = modifiers.state();
            }
            if let WindowEvent::KeyboardInput { event: key, .. } = &event
                && key.state == ElementState::Pressed
            {
                match keys::action(&key.logical_key, self.modifiers) {
                    Some(KeyAction::Quit) => event_loop.exit(),
                    Some(action) => state.act(action, event_loop, self.options.monitor),
                    None => {}
                }
            }
            state.projectors.event(id, &event, &mut state.live.show);
            return;
        }
        let consumed = state
            .hud
            .as_mut()
            .is_some_and(|hud| hud.on_window_event(&state.window, &event));
        let hud_typing = state.hud.as_ref().is_some_and(Hud::wants_keyboard);
        if let WindowEvent::KeyboardInput { event: key, .. } = &event
            && !hud_typing
            && let Some(code) = keys::browser_code(key.physical_key)
        {
            state
                .live
                .show
                .key(code, key.state == ElementState::Pressed);
        }
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => state.resize([size.width, size.height]),
            WindowEvent::ModifiersChanged(modifiers) => self.modifiers = modifiers.state(),
            WindowEvent::KeyboardInput { event, .. }
                if event.state == ElementState::Pressed && !consumed && !hud_typing =>
            {
                match keys::action(&event.logical_key, self.modifiers) {
                    Some(KeyAction::Quit) => event_loop.exit(),
                    Some(action) => state.act(action, event_loop, self.options.monitor),
                    None => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let size = state.window.inner_size();
                let moved = state
                    .pointer
                    .moved([position.x, position.y], [size.width, size.height]);
                state.point(moved);
            }
            WindowEvent::MouseInput {
                state: pressed,
                button: winit::event::MouseButton::Left,
                ..
            } if !consumed || pressed == ElementState::Released => {
                let pressed = state.pointer.button(pressed == ElementState::Pressed);
                state.point(pressed);
            }
            WindowEvent::RedrawRequested => {
                let now = Instant::now();
                let dt = now.duration_since(self.last_frame).as_secs_f32().min(0.25);
                self.last_frame = now;
                if state.frame(dt) == Stepped::Ended {
                    tracing::info!("the leader's show ended");
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(state) = self.state.as_mut() {
            state.projectors.sync(event_loop, &mut state.live.show);
            state.window.request_redraw();
        }
    }
}

impl App {
    fn open(&self, event_loop: &ActiveEventLoop) -> anyhow::Result<OpenWindow> {
        let monitor = event_loop
            .primary_monitor()
            .or_else(|| event_loop.available_monitors().next());
        // Logical pixels, as the window's size is given in them.
        let screen = monitor.map(|m| {
            let size = m.size().to_logical::<f64>(m.scale_factor());
            [size.width, size.height]
        });
        let [width, height] = window_size(WINDOW_SIZE, screen);
        let mut attributes = Window::default_attributes()
            .with_title("sylva")
            .with_inner_size(winit::dpi::LogicalSize::new(width, height));
        if self.options.fullscreen || self.options.install.unattended {
            attributes =
                attributes.with_fullscreen(Some(borderless(event_loop, self.options.monitor)));
        }
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| NoDisplay(e.to_string()))?,
        );
        let instance = Gpu::instance();
        let surface = instance.create_surface(window.clone())?;
        let gpu = Gpu::new(
            instance,
            &self.options.show.adapter,
            Some(&surface),
            ErrorLog::default(),
        )?;
        let size = window.inner_size();
        let config = surface_config(
            &gpu,
            &surface,
            [size.width, size.height],
            self.options.vsync,
        )?;
        surface.configure(&gpu.device, &config);
        let hud = if self.options.install.unattended {
            window.set_cursor_visible(false);
            None
        } else {
            Some(Hud::new(
                &window,
                &gpu.device,
                config.format.remove_srgb_suffix(),
            ))
        };
        let show = start_live_on(Arc::new(gpu), &self.options.show, config.format)?;
        let blit = Blit::new(&show.ground.gpu, &show.ground.assets, config.format)?;
        let fps = window
            .current_monitor()
            .and_then(|m| m.refresh_rate_millihertz())
            .map_or(60.0, |mhz| mhz as f32 / 1000.0);
        let live = Live::start(
            show,
            &LiveOptions {
                control: Some(&self.options.control),
                install: &self.options.install,
                send: &self.options.send,
                fps,
                playlist: self.options.show.playlist.as_deref(),
                ensemble: self.options.ensemble,
                catch_up: true,
            },
        )?;
        Ok(OpenWindow {
            blit,
            window,
            surface,
            config,
            live,
            hud,
            pointer: Pointer::default(),
            projectors: Projectors::default(),
        })
    }
}

impl OpenWindow {
    fn resize(&mut self, size: [u32; 2]) {
        if size[0] == 0 || size[1] == 0 {
            return;
        }
        self.config.width = size[0];
        self.config.height = size[1];
        self.surface
            .configure(&self.live.show.ground.gpu.device, &self.config);
    }

    fn act(&mut self, action: KeyAction, event_loop: &ActiveEventLoop, monitor: Option<usize>) {
        match action {
            KeyAction::ToggleFullscreen => {
                let next = match self.window.fullscreen() {
                    Some(_) => None,
                    None => Some(borderless(event_loop, monitor)),
                };
                self.window.set_fullscreen(next);
            }
            KeyAction::LeaveFullscreen => self.window.set_fullscreen(None),
            KeyAction::ToggleHud => {
                if let Some(hud) = self.hud.as_mut() {
                    hud.visible = !hud.visible;
                }
            }
            KeyAction::Learn => match self.hud.as_ref().and_then(Hud::selected) {
                Some(param) => {
                    if let Err(error) = self.live.show.perform(Command::Learn(param)) {
                        self.live.show.ground.errors.report("midi learn", error);
                    }
                }
                None => self.live.show.ground.errors.report(
                    "midi learn",
                    "click a parameter name in the HUD, then press l",
                ),
            },
            KeyAction::Playlist(forward) => {
                let step = if forward {
                    crate::command::PlaylistCommand::Next
                } else {
                    crate::command::PlaylistCommand::Previous
                };
                if let Err(error) = self.live.show.perform(Command::Playlist(step)) {
                    self.live.show.ground.errors.report("playlist", error);
                }
            }
            KeyAction::TogglePointer => {
                let released = self.pointer.toggle();
                self.point(released);
            }
            KeyAction::ToggleMapping => {
                if self.live.show.outputs_name().is_none() {
                    self.live.show.ground.errors.report(
                        "mapping",
                        "no outputs file in use: start with --outputs NAME",
                    );
                } else {
                    let on = !self.live.show.registry.flag(crate::outputs::PATTERN);
                    self.live.show.show_pattern(on);
                }
            }
            KeyAction::SaveMapping => {
                if let Err(error) = self.live.show.perform(Command::SaveOutputs) {
                    self.live.show.ground.errors.report("mapping", error);
                }
            }
            KeyAction::NextHandle => projectors::select_next(&mut self.live.show),
            KeyAction::Nudge(step, coarse) => projectors::nudge(&mut self.live.show, step, coarse),
            KeyAction::Quit => {}
        }
    }

    /// Carries out what the pointer asks, if anything.
    fn point(&mut self, command: Option<Command>) {
        if let Some(command) = command
            && let Err(error) = self.live.show.perform(command)
        {
            self.live.show.ground.errors.report("pointer", error);
        }
    }

    /// A new device after the one under the show was lost: the show,
    /// the surface and the HUD move to it. Fails only when the show cannot
    /// be built on the new device at all.
    fn recover_device(&mut self) -> anyhow::Result<()> {
        self.live.show.recover_device(Some(&self.surface))?;
        if self.live.show.ground.gpu.is_lost() {
            return Ok(());
        }
        self.surface
            .configure(&self.live.show.ground.gpu.device, &self.config);
        self.blit = Blit::new(
            &self.live.show.ground.gpu,
            &self.live.show.ground.assets,
            self.config.format,
        )?;
        if let Some(hud) = self.hud.as_mut() {
            let visible = hud.visible;
            *hud = Hud::new(
                &self.window,
                &self.live.show.ground.gpu.device,
                self.config.format.remove_srgb_suffix(),
            );
            hud.visible = visible;
        }
        Ok(())
    }

    fn frame(&mut self, dt: f32) -> Stepped {
        if self.live.show.ground.gpu.is_lost()
            && let Err(error) = self.recover_device()
        {
            self.live.show.ground.errors.report(
                "gpu",
                format!("the show could not move to a new device: {error:#}"),
            );
            return Stepped::Held;
        }
        let Some(texture) = self.next_texture() else {
            // No texture to draw on (the window hidden, the surface out of
            // date): an installation off air still hears its controls and
            // naps rather than spin.
            if !self.live.on_air() {
                self.live.listen();
                std::thread::sleep(OFF_AIR_NAP);
            }
            return Stepped::Held;
        };
        let view = texture
            .texture
            .create_view(&wgpu::TextureViewDescriptor::default());
        let hud_view = texture.texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(self.config.format.remove_srgb_suffix()),
            ..Default::default()
        });
        let size = [self.config.width, self.config.height];
        let status = self.live.status_lines();
        let (hud, window) = (&mut self.hud, &self.window);
        let mut surface = SurfaceOutput::new(&view, size, &self.blit);
        let mut outputs = Both(&mut surface, &mut self.projectors);
        let stepped = self.live.step(dt, &mut outputs, |show, encoder| {
            if let Some(hud) = hud {
                hud.draw(window, show, &status, encoder, &hud_view, size);
            }
        });
        let off_air = matches!(stepped, Stepped::OffAir | Stepped::Ended);
        if off_air {
            self.black(&view);
        }
        self.window.pre_present_notify();
        self.live.show.ground.gpu.queue.present(texture);
        if stepped == Stepped::OffAir {
            std::thread::sleep(OFF_AIR_NAP);
        }
        stepped
    }

    /// The surface's next texture to draw, if it has one this frame; a
    /// surface that no longer fits the window is configured again.
    fn next_texture(&mut self) -> Option<wgpu::SurfaceTexture> {
        match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) => Some(t),
            wgpu::CurrentSurfaceTexture::Suboptimal(t) => {
                // Draw this one; reconfigure before the next.
                self.surface
                    .configure(&self.live.show.ground.gpu.device, &self.config);
                Some(t)
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface
                    .configure(&self.live.show.ground.gpu.device, &self.config);
                None
            }
            other => {
                tracing::debug!("no surface texture this frame: {other:?}");
                None
            }
        }
    }

    /// Black on the screen: an installation off air.
    fn black(&self, view: &wgpu::TextureView) {
        let gpu = &self.live.show.ground.gpu;
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("off air"),
            });
        crate::gpu::clear_view(&mut encoder, view);
        gpu.queue.submit([encoder.finish()]);
    }
}

/// Borderless fullscreen on monitor `index`, or the current one.
/// The window's size where the screen has room for it, in logical pixels.
const WINDOW_SIZE: [f64; 2] = [1280.0, 720.0];

/// The size the window opens at: `preferred`, scaled down (its aspect
/// kept) to at most 80% of the `screen` it opens on, so a small screen
/// keeps room for the desktop around it; `preferred` where the screen is
/// unknown (Wayland says only once the window is up).
fn window_size(preferred: [f64; 2], screen: Option<[f64; 2]>) -> [f64; 2] {
    let Some([width, height]) = screen.filter(|s| s[0] > 0.0 && s[1] > 0.0) else {
        return preferred;
    };
    let scale = (0.8 * width / preferred[0])
        .min(0.8 * height / preferred[1])
        .min(1.0);
    [
        (preferred[0] * scale).round(),
        (preferred[1] * scale).round(),
    ]
}

fn borderless(event_loop: &ActiveEventLoop, index: Option<usize>) -> Fullscreen {
    let monitor = index.and_then(|i| {
        let found = event_loop.available_monitors().nth(i);
        if found.is_none() {
            tracing::warn!("no monitor {i}; using the current one");
        }
        found
    });
    Fullscreen::Borderless(monitor)
}

pub(super) fn surface_config(
    gpu: &Gpu,
    surface: &wgpu::Surface<'_>,
    size: [u32; 2],
    vsync: bool,
) -> anyhow::Result<wgpu::SurfaceConfiguration> {
    let capabilities = surface.get_capabilities(&gpu.adapter);
    let format = capabilities
        .formats
        .iter()
        .copied()
        .find(wgpu::TextureFormat::is_srgb)
        .or_else(|| capabilities.formats.first().copied())
        .context("the surface offers no texture format")?;
    Ok(wgpu::SurfaceConfiguration {
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        format,
        width: size[0].max(1),
        height: size[1].max(1),
        present_mode: if vsync {
            wgpu::PresentMode::AutoVsync
        } else {
            wgpu::PresentMode::AutoNoVsync
        },
        desired_maximum_frame_latency: 2,
        alpha_mode: capabilities
            .alpha_modes
            .first()
            .copied()
            .unwrap_or(wgpu::CompositeAlphaMode::Auto),
        view_formats: vec![format.remove_srgb_suffix()],
        color_space: wgpu::SurfaceColorSpace::Auto,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_opens_within_80_percent_of_a_small_screen() {
        // A 1366x768 laptop: 80% of 768 is 614.4, the width follows at 16:9.
        assert_eq!(
            window_size(WINDOW_SIZE, Some([1366.0, 768.0])),
            [1092.0, 614.0]
        );
        // A 1280x800 tablet-sized screen: its width is the limit.
        assert_eq!(
            window_size(WINDOW_SIZE, Some([1280.0, 800.0])),
            [1024.0, 576.0]
        );
        // Room to spare: the usual size, never larger.
        assert_eq!(
            window_size(WINDOW_SIZE, Some([3840.0, 2160.0])),
            WINDOW_SIZE
        );
        assert_eq!(
            window_size(WINDOW_SIZE, Some([1920.0, 1080.0])),
            WINDOW_SIZE
        );
        // A screen that says nothing: the usual size.
        assert_eq!(window_size(WINDOW_SIZE, None), WINDOW_SIZE);
        assert_eq!(window_size(WINDOW_SIZE, Some([0.0, 0.0])), WINDOW_SIZE);
    }
}
