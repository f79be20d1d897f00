//! The GPU context: instance, chosen adapter, device and queue. Created once
//! at start by the window, the headless loop, the bench or a test; every
//! layer borrows it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::BuildError;

use crate::base::status::ErrorLog;

/// Environment variable that picks an adapter by name substring when
/// `--adapter` is not given (tests set it to `llvmpipe`).
pub const ADAPTER_ENV: &str = "SYLVA_ADAPTER";

/// Why no usable GPU device could be had.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter at all, or none matching the requested name.
    #[error("no GPU adapter{}; adapters found: {found}", match .wanted { Some(w) => format!(" matching {w:?}"), None => String::new() })]
    NoAdapter {
        /// The name asked for.
        wanted: Option<String>,
        /// Adapters that exist, for the message.
        found: String,
    },
    /// The adapter refused to create a device.
    #[error("the adapter {adapter} refused to open a device: {reason}")]
    Device {
        /// Adapter name.
        adapter: String,
        /// wgpu's reason.
        reason: wgpu::RequestDeviceError,
    },
    /// The window's surface could not be created.
    #[error("cannot create a drawing surface for the window: {0}")]
    Surface(#[from] wgpu::CreateSurfaceError),
}

/// What adapter to pick.
#[derive(Debug, Clone, Default)]
pub struct AdapterChoice {
    /// Substring of the adapter name (case-insensitive); `None` picks the
    /// best one, a discrete GPU first.
    pub name: Option<String>,
    /// Features the device goes without even where the adapter has them.
    pub leave_off: wgpu::Features,
}

/// 64-bit integers and their atomic maximum in shaders, together.
pub const WIDE_ATOMICS: wgpu::Features =
    wgpu::Features::SHADER_INT64.union(wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX);

impl AdapterChoice {
    /// `--adapter NAME` if given, else the `SYLVA_ADAPTER` variable.
    pub fn from_cli(name: Option<String>) -> Self {
        let name = name.or_else(|| std::env::var(ADAPTER_ENV).ok().filter(|s| !s.is_empty()));
        Self {
            name,
            leave_off: wgpu::Features::empty(),
        }
    }
}

/// The device every layer renders with.
pub struct Gpu {
    /// The wgpu instance (needed again to create window surfaces).
    pub instance: wgpu::Instance,
    /// The adapter chosen.
    pub adapter: wgpu::Adapter,
    /// The logical device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Name, type, backend and driver of the adapter.
    pub info: wgpu::AdapterInfo,
    /// Whether timestamp queries are available for per-pass timing.
    pub timestamps: bool,
    /// Where uncaptured device errors go.
    pub errors: ErrorLog,
    /// The adapter choice the device was opened with (to open another
    /// after a loss).
    pub choice: AdapterChoice,
    lost: Arc<AtomicBool>,
}

impl Gpu {
    /// A new instance on the native backends (Vulkan, Metal, DX12); wgpu's
    /// environment variables (`WGPU_BACKEND=gl` and friends) override that.
    /// Indirect dispatches are not validated, whatever the environment
    /// asks: every one's arguments are written by a kernel of ours within
    /// the device's limits (the fluid's plan and its splat, clamped to
    /// 65,535 groups; the colony's node count, at most 62,500 groups; the
    /// forest's step, at most 4,096), and wgpu's check adds a dispatch and
    /// barriers before each (on the H200 the fluid's seven indirect sort
    /// dispatches cost 0.048 ms a substep when empty, 0.017 unchecked).
    pub fn instance() -> wgpu::Instance {
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        descriptor.backends = wgpu::Backends::PRIMARY;
        let mut descriptor = descriptor.with_env();
        descriptor
            .flags
            .remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
        wgpu::Instance::new(descriptor)
    }

    /// Picks an adapter (compatible with `surface` if given) and opens a
    /// device with the adapter's own limits, so large simulations can use
    /// what the hardware offers. Uncaptured errors are logged, not fatal.
    pub fn new(
        instance: wgpu::Instance,
        choice: &AdapterChoice,
        surface: Option<&wgpu::Surface<'_>>,
        errors: ErrorLog,
    ) -> Result<Self, GpuError> {
        let adapter = pick_adapter(&instance, choice, surface)?;
        let info = adapter.get_info();
        // Timestamps for the HUD and the bench; BGRA storage where the
        // adapter has it, so the master section can store a window's
        // picture by compute (`engine::picture::Picture`); timestamps
        // between passes where it has them, so a frame's GPU span holds the
        // copies outside its passes too; 64-bit atomic maxima, with which
        // the forest's impostors are walked once, not twice; BC textures,
        // into which HAP clips are uploaded as they are. A choice may
        // leave some off (tests of the paths without them).
        let wanted = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::BGRA8UNORM_STORAGE
            | wgpu::Features::TEXTURE_COMPRESSION_BC
            | WIDE_ATOMICS;
        let required_features = adapter.features() & (wanted - choice.leave_off);
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("sylva"),
            required_features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|reason| {
                GpuError::Device {
                    adapter: info.name.clone(),
                    reason,
                }
            })?;
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            sink.report("gpu", error.to_string());
        }));
        let lost = Arc::new(AtomicBool::new(false));
        let (flag, sink) = (lost.clone(), errors.clone());
        device.set_device_lost_callback(move |reason, message| {
            flag.store(true, Ordering::SeqCst);
            sink.report(
                "gpu",
                format!("the GPU device was lost ({reason:?}): {message}"),
            );
        });
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
            info,
            timestamps: required_features.contains(wgpu::Features::TIMESTAMP_QUERY),
            errors,
            choice: choice.clone(),
            lost,
        })
    }

    /// A new device like this one (the same adapter choice, instance,
    /// error log), for a show whose device was lost.
    pub fn reopen(&self, surface: Option<&wgpu::Surface<'_>>) -> Result<Self, GpuError> {
        Self::new(
            self.instance.clone(),
            &self.choice,
            surface,
            self.errors.clone(),
        )
    }

    /// Whether the device was lost (a driver reset, a GPU unplugged, a
    /// timeout the system recovered from): nothing made on it works again.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// One line naming the adapter, printed at start and in BENCHMARKS.md.
    pub fn adapter_line(&self) -> String {
        describe(&self.info)
    }

    /// Checks that one storage buffer of `bytes` fits this device's
    /// binding and buffer limits, before anything is allocated; `what`
    /// names it in the error (`"fluid.count 16000000: particles"`).
    pub fn check_storage(&self, what: &str, bytes: u64) -> Result<(), BuildError> {
        let limits = self.device.limits();
        let limit = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if bytes > limit {
            return Err(BuildError::TooLarge {
                what: what.to_string(),
                bytes,
                limit,
            });
        }
        Ok(())
    }

    /// Runs `build` inside validation and out-of-memory error scopes, so a
    /// GPU object that cannot be made is an error here (named `label`),
    /// returned with the rest of `build`'s, never an uncaptured error on
    /// every later frame.
    pub fn scoped<T, E: From<BuildError>>(
        &self,
        label: &str,
        build: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let built = build();
        let invalid = pollster::block_on(validation.pop());
        let exhausted = pollster::block_on(memory.pop());
        match (built, invalid.or(exhausted)) {
            (Ok(value), None) => Ok(value),
            (Err(error), _) => Err(error),
            (Ok(_), Some(error)) => Err(BuildError::Device {
                label: label.to_string(),
                message: error.to_string(),
            }
            .into()),
        }
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn wait_idle(&self) {
        if let Err(error) = self.device.poll(wgpu::PollType::wait_indefinitely()) {
            self.errors
                .report("gpu", format!("waiting for the GPU: {error}"));
        }
    }
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!(
        "{} ({:?}, {:?}, driver {} {})",
        info.name, info.device_type, info.backend, info.driver, info.driver_info
    )
}

fn pick_adapter(
    instance: &wgpu::Instance,
    choice: &AdapterChoice,
    surface: Option<&wgpu::Surface<'_>>,
) -> Result<wgpu::Adapter, GpuError> {
    let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    let found = all
        .iter()
        .map(|a| describe(&a.get_info()))
        .collect::<Vec<_>>()
        .join("; ");
    let wanted = choice.name.as_ref().map(|n| n.to_lowercase());
    let best = all
        .into_iter()
        .filter(|a| surface.is_none_or(|s| a.is_surface_supported(s)))
        .filter(|a| {
            wanted
                .as_ref()
                .is_none_or(|w| a.get_info().name.to_lowercase().contains(w))
        })
        .max_by_key(|a| rank(&a.get_info()));
    best.ok_or_else(|| GpuError::NoAdapter {
        wanted: choice.name.clone(),
        found: if found.is_empty() {
            "none (install a Vulkan driver, e.g. mesa-vulkan-drivers)".into()
        } else {
            found
        },
    })
}

/// Higher is better: discrete before integrated before software, and native
/// backends before GL.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let device = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 4,
        wgpu::DeviceType::IntegratedGpu => 3,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 1,
        wgpu::DeviceType::Cpu => 0,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 1,
        _ => 0,
    };
    (device, backend)
}

/// Whether Mesa's device-selection Vulkan layer should be left out:
/// `VK_LAYER_MESA_device_select` connects to the Wayland display at every
/// adapter listing to find the GPU that drives it, and libwayland prints
/// `error: XDG_RUNTIME_DIR is invalid or not set in the environment.`
/// (twice a start) where `XDG_RUNTIME_DIR` is unset or relative, which is
/// exactly where no Wayland display can be reached, so the layer has
/// nothing to find. Kept when the person asked it for a device
/// (`MESA_VK_DEVICE_SELECT`, `DRI_PRIME`) or a Wayland socket is given
/// some other way. `var` reads the environment.
pub fn skip_device_select(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let absolute = |name: &str| var(name).is_some_and(|v| v.to_string_lossy().starts_with('/'));
    let given = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    !absolute("XDG_RUNTIME_DIR")
        && !absolute("WAYLAND_DISPLAY")
        && !given("WAYLAND_SOCKET")
        && !given("MESA_VK_DEVICE_SELECT")
        && !given("DRI_PRIME")
        && !given("NODEVICE_SELECT")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skips(vars: &[(&str, &str)]) -> bool {
        skip_device_select(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        })
    }

    #[test]
    fn device_select_is_left_out_only_where_wayland_cannot_be_reached() {
        assert!(skips(&[]));
        assert!(skips(&[("XDG_RUNTIME_DIR", "run/user/1000")]));
        assert!(skips(&[("XDG_RUNTIME_DIR", ""), ("DISPLAY", ":0")]));
        assert!(!skips(&[("XDG_RUNTIME_DIR", "/run/user/1000")]));
        assert!(!skips(&[("WAYLAND_DISPLAY", "/tmp/wayland-1")]));
        assert!(!skips(&[("WAYLAND_SOCKET", "5")]));
        assert!(!skips(&[("MESA_VK_DEVICE_SELECT", "1002:73bf")]));
        assert!(!skips(&[("DRI_PRIME", "1")]));
        assert!(!skips(&[("NODEVICE_SELECT", "1")]));
    }
}
